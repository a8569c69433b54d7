// Package changes turns what one sync saw into the state changes of a
// watch's items, and delivers them where teams route them: Kubernetes
// Events on the watch, and, when a sink is configured, CloudEvents.
//
// A change is found by comparing the items a sync read with the items the
// watch's stored status holds, so the stored status is the one baseline:
// it survives restarts and leader changes, and a change is neither repeated
// nor lost across them.
package changes

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Kind names the kind of item that changed, as status names its list.
type Kind string

// The kinds of item whose state is followed.
const (
	KindPipe                   Kind = "Pipe"
	KindReversePrivateEndpoint Kind = "ReversePrivateEndpoint"
	KindAlert                  Kind = "Alert"
)

// Change is one item's state change, seen by one successful sync of one
// watch. Every string in it has been scrubbed and bounded like status.
type Change struct {
	// ID is stable for this change of this item of this watch, the same on
	// every delivery and after a restart, so that a receiver can drop
	// duplicates.
	ID string
	// Namespace, Watch and WatchUID name the ServiceWatch.
	Namespace string
	Watch     string
	WatchUID  types.UID
	// Kind, ItemID and ItemName name the item (ItemName may be empty).
	Kind     Kind
	ItemID   string
	ItemName string
	// From and To are the old and new states ("" when unknown).
	From string
	To   string
	// Since is when the new state was first seen.
	Since time.Time
	// Worse is true when the item moved into a state a user must act on.
	Worse bool
}

// Sink receives the changes of one sync after they were found. Offer must
// never block a sync: a sink queues what it can and counts what it drops.
type Sink interface {
	Offer(changes []Change)
}
