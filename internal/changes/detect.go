package changes

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

// Item is one item of a watch's list as detection sees it: the status's
// (the baseline) or what a sync read.
type Item struct {
	// ID identifies the item in its list; an item without one is not
	// followed.
	ID string
	// Name names the item for a person ("" when it has none).
	Name string
	// State is its state (a pipe's or an alert's state, an endpoint's
	// status) as the cloud spells it; "" when the cloud sent none.
	State string
	// Since is when State was first seen, on a baseline item; zero when
	// the status holds none (written by a version before since).
	Since time.Time
	// Stale, on a read item: its own read failed and its state is the last
	// good one (an alert whose fetch failed). It keeps its since and is no
	// change; one never read has no since.
	Stale bool
}

// Watch names the ServiceWatch whose items are compared.
type Watch struct {
	Namespace, Name string
	UID             types.UID
}

// Input is one list of one watch at the end of a successful read of it.
type Input struct {
	Watch Watch
	Kind  Kind
	// Now is when the read's states were seen: the since of a new state.
	// Whole seconds, so that it reads back from status unchanged.
	Now time.Time
	// Baseline are the items the stored status lists.
	Baseline []Item
	// LeftOut is the stored record of the items status left out.
	LeftOut LeftOut
	// Read are the items the sync read: every item it knows of.
	Read []Item
}

// Result is what detection found of one list.
type Result struct {
	// Since is, by item ID, the since of every read item with an ID.
	Since map[string]time.Time
	// Changes are the state changes of items the baseline listed, in the
	// order of the read.
	Changes []Change
}

// Detect compares what a sync read of one list with the baseline, the
// stored status: an item whose state is the baseline's keeps its since; an
// item whose state differs from the baseline's is a change, since Now; an
// item the baseline does not list (new, or listed for the first time: the
// first sync of a watch lists none) is since Now and no change, unless the
// record of left-out items knows it in the same state, when it keeps that
// since. An item the read lacks is no change: it left the list, or the list
// left it out; it starts again if it comes back. A list whose read failed is
// not compared at all: its status keeps its items and their since.
func Detect(in Input) Result {
	before := make(map[string]Item, len(in.Baseline))
	for _, b := range in.Baseline {
		if b.ID != "" {
			before[b.ID] = b
		}
	}
	res := Result{Since: make(map[string]time.Time, len(in.Read))}
	for _, item := range in.Read {
		if item.ID == "" {
			continue
		}
		old, listed := before[item.ID]
		switch {
		case listed && (old.State == item.State || item.Stale):
			res.Since[item.ID] = sinceOr(old.Since, in.Now)
		case listed:
			res.Since[item.ID] = in.Now
			res.Changes = append(res.Changes, change(in, old, item))
		case item.Stale: // never read: its state is not known yet
		default:
			res.Since[item.ID] = sinceOr(in.LeftOut.Since(in.Kind, item.ID, item.State), in.Now)
		}
	}
	return res
}

// sinceOr is since, or now when since is unknown.
func sinceOr(since, now time.Time) time.Time {
	if since.IsZero() {
		return now
	}
	return since
}

// change is the change of old into cur seen at in.Now.
func change(in Input, old, cur Item) Change {
	name := cur.Name
	if name == "" {
		name = old.Name
	}
	return Change{
		ID:        ChangeID(in.Watch.UID, in.Kind, cur.ID, old.State, old.Since, cur.State),
		Namespace: in.Watch.Namespace, Watch: in.Watch.Name, WatchUID: in.Watch.UID,
		Kind: in.Kind, ItemID: cur.ID, ItemName: name,
		From: old.State, To: cur.State, Since: in.Now,
		Worse: NeedsAttention(in.Kind, cur.State) && !NeedsAttention(in.Kind, old.State),
	}
}

// ChangeID identifies a change by what the baseline said and what the read
// found: the watch, the item, its old state and since, and its new state.
// Found again from the same baseline (a retried write, a restart before the
// status was written) it is the same, so a change is told once however
// often it is found; the same move later (after the item moved back) has a
// new old since, and so a new ID. 32 hex digits.
func ChangeID(watch types.UID, kind Kind, itemID, from string, fromSince time.Time, to string) string {
	h := sha256.New()
	for _, part := range []string{string(watch), string(kind), itemID, from, strconv.FormatInt(unixOrZero(fromSince), 10), to} {
		h.Write([]byte(strconv.Itoa(len(part))))
		h.Write([]byte{':'})
		h.Write([]byte(part))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// NeedsAttention tells whether an item of kind in state needs a user to
// act, by the API types' one rule (their NeedsAttention) applied to the
// state alone.
func NeedsAttention(kind Kind, state string) bool {
	if state == "" {
		return false
	}
	switch kind {
	case KindPipe:
		return (&swv1.Pipe{State: &state}).NeedsAttention()
	case KindReversePrivateEndpoint:
		return (&swv1.ReversePrivateEndpoint{Status: &state}).NeedsAttention()
	case KindAlert:
		return (&swv1.AlertStatus{State: &state}).NeedsAttention()
	}
	return false
}

// LeftOut is the record status.leftOutSince keeps of the items the status
// lists left out: for each, a digest of its kind, id and state, and its
// since. It holds no id, so it costs the same whatever the cloud's ids are,
// and tells an item's since only while its state is the one recorded.
type LeftOut map[string]time.Time

// Bounds of the record: what one entry is charged in status (its JSON, or
// its decoded string header and bytes, the larger; see bound.Charge), and
// the most entries it keeps (the CRD's MaxItems).
const (
	LeftOutEntryBytes = 64
	MaxLeftOut        = 1024
)

// kindLetters name the kinds in an entry.
var kindLetters = map[Kind]string{KindPipe: "p", KindReversePrivateEndpoint: "e", KindAlert: "a"}

// ParseLeftOut reads status.leftOutSince; an entry it cannot read is
// skipped (its item starts again).
func ParseLeftOut(entries []string) LeftOut {
	if len(entries) == 0 {
		return nil
	}
	record := make(LeftOut, len(entries))
	for _, e := range entries {
		key, secs, ok := strings.Cut(e[min(len(e), 2):], ":")
		if !ok || len(e) < 2 || e[1] != ':' {
			continue
		}
		unix, err := strconv.ParseInt(secs, 10, 64)
		if err != nil || unix <= 0 {
			continue
		}
		record[e[:2]+key] = time.Unix(unix, 0).UTC()
	}
	return record
}

// Since is when the item of kind and id was first seen in state, if the
// record keeps it in that state; zero otherwise.
func (l LeftOut) Since(kind Kind, id, state string) time.Time {
	if l == nil {
		return time.Time{}
	}
	return l[leftOutKey(kind, id, state)]
}

// Of is the part of the record of the kinds given: a list whose read
// failed keeps its entries as they are.
func (l LeftOut) Of(kinds ...Kind) LeftOut {
	out := LeftOut{}
	for key, since := range l {
		for _, k := range kinds {
			if strings.HasPrefix(key, kindLetters[k]+":") {
				out[key] = since
			}
		}
	}
	return out
}

// Add records the item of kind, id and state as first seen in it at since.
func (l LeftOut) Add(kind Kind, id, state string, since time.Time) {
	if id != "" && !since.IsZero() {
		l[leftOutKey(kind, id, state)] = since
	}
}

// Entries are the record as status keeps it, in a stable order.
func (l LeftOut) Entries() []string {
	if len(l) == 0 {
		return nil
	}
	out := make([]string, 0, len(l))
	for key, since := range l {
		out = append(out, key+":"+strconv.FormatInt(since.Unix(), 10))
	}
	slices.Sort(out)
	return out
}

// leftOutKey is an entry's kind letter and digest.
func leftOutKey(kind Kind, id, state string) string {
	sum := sha256.Sum256([]byte(strconv.Itoa(len(id)) + ":" + id + ":" + state))
	return kindLetters[kind] + ":" + hex.EncodeToString(sum[:8])
}
