package changes

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// changeOfPipe is the change of a pipe of the fake cloud's data as it is
// served, its source's credentials included, going from Running to to.
func changeOfPipe(t *testing.T, pipeID, to string) Change {
	t.Helper()
	svc := fakecloud.DefaultData().Organizations[fakecloud.DefaultOrganizationID][fakecloud.DefaultServiceID]
	for _, p := range svc.Pipes {
		if p["id"] == pipeID {
			name, _ := p["name"].(string)
			from, _ := p["state"].(string)
			return Change{ID: "chg-secret", Namespace: "team-a", Watch: "orders", Kind: KindPipe, ItemID: pipeID, ItemName: name, From: from, To: to}
		}
	}
	t.Fatalf("no pipe %s in the fake cloud's data", pipeID)
	return Change{}
}

// The object-storage pipe's connection string, and the management key that
// read it, are in nothing sent: only the Change's fields are, and the
// Change has no field for a pipe's source. The raw request is searched,
// headers and body, and the event carries no attribute and no data field
// but those the docs list.
func TestEventCarriesNoCredential(t *testing.T) {
	r := startReceiver(t, "127.0.0.1:0", nil, nil)
	s, _ := testSink(t, "http://"+r.addr+"/", nil, SinkDeps{})
	start(t, s)
	s.Offer([]Change{changeOfPipe(t, fakecloud.ObjectStoragePipeID, "Failed")})
	eventually(t, "the event received", func() bool { return len(r.received()) == 1 })

	r.mu.Lock()
	raw := r.raw[0]
	r.mu.Unlock()
	wire := string(raw.body)
	for k, v := range raw.header {
		wire += "\n" + k + ": " + strings.Join(v, ",")
	}
	for _, secret := range []string{fakecloud.FakeConnectionString, fakecloud.DefaultKeyID, fakecloud.DefaultKeySecret, fakecloud.DefaultAlertToken} {
		if strings.Contains(wire, secret) {
			t.Errorf("the request carries %q:\n%s", secret, wire)
		}
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw.body, &doc); err != nil {
		t.Fatal(err)
	}
	wantAttrs := []string{"data", "datacontenttype", "id", "itemid", "itemkind", "namespace", "servicewatch", "source", "specversion", "subject", "type"}
	if got := slices.Sorted(maps.Keys(doc)); !slices.Equal(got, wantAttrs) {
		t.Errorf("event attributes %v, want %v", got, wantAttrs)
	}
	var data map[string]any
	if err := json.Unmarshal(doc["data"], &data); err != nil {
		t.Fatal(err)
	}
	// since is left out when the change does not know it.
	if got, want := slices.Sorted(maps.Keys(data)), []string{"from", "id", "kind", "name", "to", "worse"}; !slices.Equal(got, want) {
		t.Errorf("data fields %v, want %v", got, want)
	}
	if data["name"] != "logs_object_storage" || data["from"] != "Running" || data["to"] != "Failed" {
		t.Errorf("data %v", data)
	}
}

func TestNewEventRefusesAChangeWithoutID(t *testing.T) {
	if _, err := NewEvent(Change{Namespace: "a", Watch: "w", Kind: KindAlert, ItemID: "x"}); err == nil {
		t.Error("an event without an id was built: its duplicates could not be dropped")
	}
	e, err := NewEvent(Change{ID: "1", Namespace: "a", Watch: "w", Kind: KindReversePrivateEndpoint, ItemID: "rpe-1"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Subject() != "ReversePrivateEndpoint/rpe-1" || !e.Time().IsZero() {
		t.Errorf("subject %q, time %v; want ReversePrivateEndpoint/rpe-1 and no time when Since is unknown", e.Subject(), e.Time())
	}
}
