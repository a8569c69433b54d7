package changes

import (
	"errors"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

// EventType is the CloudEvents type of an item state change. Its version
// suffix changes when the data's shape does, so a receiver can filter on it.
const EventType = "io.servicewatch.item.statechanged.v1"

// The CloudEvents extension attributes of a change (lowercase letters and
// digits only, as the specification requires), so that a broker's trigger
// can filter on them without reading the data.
const (
	ExtensionNamespace    = "namespace"
	ExtensionServiceWatch = "servicewatch"
	ExtensionItemKind     = "itemkind"
	ExtensionItemID       = "itemid"
)

// EventData is the data of a change's CloudEvent, as JSON: the item and its
// old and new states. It holds nothing the Change does not, and the Change
// holds nothing status does not show (it has been scrubbed).
type EventData struct {
	Kind Kind   `json:"kind"`
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	// From is "" when the old state was unknown.
	From  string    `json:"from"`
	To    string    `json:"to"`
	Since time.Time `json:"since,omitzero"`
	// Worse is true when the item moved into a state a user must act on.
	Worse bool `json:"worse"`
}

// EventSource is the source of the changes of one ServiceWatch: its path in
// the Kubernetes API, without the version, so that it stays the same across
// API versions.
func EventSource(namespace, name string) string {
	return "/apis/" + swv1.GroupVersion.Group + "/namespaces/" + namespace + "/servicewatches/" + name
}

// EventSubject names the item within its watch: "<kind>/<item ID>".
func EventSubject(kind Kind, itemID string) string {
	return string(kind) + "/" + itemID
}

// NewEvent is the CloudEvent of c: its ID is the change's, so every delivery
// of one change carries the same id and a receiver can drop duplicates.
func NewEvent(c Change) (cloudevents.Event, error) {
	if c.ID == "" {
		return cloudevents.Event{}, errors.New("a change without an ID cannot be told from its duplicates")
	}
	e := cloudevents.NewEvent(cloudevents.VersionV1)
	e.SetID(c.ID)
	e.SetType(EventType)
	e.SetSource(EventSource(c.Namespace, c.Watch))
	e.SetSubject(EventSubject(c.Kind, c.ItemID))
	if !c.Since.IsZero() {
		e.SetTime(c.Since)
	}
	e.SetExtension(ExtensionNamespace, c.Namespace)
	e.SetExtension(ExtensionServiceWatch, c.Watch)
	e.SetExtension(ExtensionItemKind, string(c.Kind))
	e.SetExtension(ExtensionItemID, c.ItemID)
	data := EventData{Kind: c.Kind, ID: c.ItemID, Name: c.ItemName, From: c.From, To: c.To, Since: c.Since, Worse: c.Worse}
	if err := e.SetData(cloudevents.ApplicationJSON, data); err != nil {
		return cloudevents.Event{}, err
	}
	return e, e.Validate()
}
