package cloudapi_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// With DenyLocalAddresses, the client refuses a loopback server whether the
// URL names its address or a name that resolves to it: the check runs at
// dial time, on the resolved address. Nothing reaches the server, and the
// error says why, with a reason of its own. Without the option the same
// calls reach it.
func TestDenyLocalAddressesRefusesLoopbackAtDial(t *testing.T) {
	srv, rec := serve(t, reply{status: 200, contentType: "application/json", body: `{"status":200,"result":[]}`})
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	guarded := newClient(cloudapi.Options{DenyLocalAddresses: true})
	for _, base := range []string{srv.URL, "http://localhost:" + u.Port(), "http://[::ffff:127.0.0.1]:" + u.Port()} {
		_, err := guarded.ListPipes(context.Background(), base, testCreds, orgID, svcID, pipeOptions{})
		e := asError(t, err)
		if e.Reason != cloudapi.ReasonAddressNotAllowed || !strings.Contains(e.Error(), "loopback address") {
			t.Errorf("%s: got %s (%v), want AddressNotAllowed saying loopback", base, e.Reason, err)
		}
		if cloudapi.ReasonOf(err) != cloudapi.ReasonAddressNotAllowed {
			t.Errorf("%s: ReasonOf = %s", base, cloudapi.ReasonOf(err))
		}
		if _, err := guarded.GetAlert(context.Background(), base, testToken, "a1"); cloudapi.ReasonOf(err) != cloudapi.ReasonAddressNotAllowed {
			t.Errorf("%s: alert call: %v, want AddressNotAllowed", base, err)
		}
	}
	if n := len(rec.all()); n != 0 {
		t.Fatalf("the loopback server got %d requests from a guarded client", n)
	}

	open := newClient(cloudapi.Options{})
	if _, err := open.ListPipes(context.Background(), "http://localhost:"+u.Port(), testCreds, orgID, svcID, pipeOptions{}); err != nil {
		t.Fatalf("without the guard: %v", err)
	}
	if n := len(rec.all()); n != 1 {
		t.Errorf("without the guard the server got %d requests, want 1", n)
	}
}
