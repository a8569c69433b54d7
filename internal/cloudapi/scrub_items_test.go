package cloudapi_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/cloudapi/lenient"
)

// A service that echoes the caller's own credential in a successful list
// (a debugging proxy that repeats the Authorization header, a field that
// holds the key) must not get it into status: every string of every item,
// known fields and otherFields alike, is scrubbed of the call's credential
// in the encodings a service echoes it in.
func TestListItemsAreScrubbedOfTheCallsCredential(t *testing.T) {
	const keyID, secret = "echo-key-id-7", "echo-secret-0123456789"
	creds := cloudapi.NewBasicCredentials(keyID, secret)
	basic := base64.StdEncoding.EncodeToString([]byte(keyID + ":" + secret))
	escaped := strings.ReplaceAll(secret, "-", `\u002d`)
	forms := map[string]string{"raw": secret, "authorization header": "Basic " + basic, "JSON-escaped": escaped}
	for name, echoed := range forms {
		t.Run(name, func(t *testing.T) {
			body := `{"status":200,"requestId":"` + echoed + `","result":[` +
				// Only known fields: read by the strict decoder.
				`{"id":"p1","name":"copy of ` + echoed + `","state":"Running"},` +
				// Unknown members, one nested: read member by member.
				`{"id":"p2","name":"` + echoed + `","echo":"` + echoed + `","debug":{"request":{"headers":["Authorization: ` + echoed + `"]}},` +
				`"scaling":{"replicas":"` + echoed + `"}}]}`
			c := newClient(cloudapi.Options{Transport: respondWith(io.NopCloser(strings.NewReader(body)))})
			list, err := c.ListPipes(context.Background(), "http://api.example.invalid", creds, orgID, svcID, pipeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != 2 {
				t.Fatalf("got %d items, want 2", len(list.Items))
			}
			seen, err := json.Marshal(list)
			if err != nil {
				t.Fatal(err)
			}
			for _, leak := range []string{secret, basic, basic[4:20]} {
				if strings.Contains(string(seen), leak) {
					t.Errorf("the credential (%s) reached the decoded list: %s", name, seen)
				}
			}
			if !strings.Contains(string(seen), `\u003credacted\u003e`) {
				t.Errorf("nothing reads <redacted>: %s", seen)
			}
		})
	}
}

// An answer that costs more decode work than its budget fails the call
// with DecodeBudgetExceeded, and decoding stops there: what it costs is
// bounded by the budget, not by the answer.
func TestListOverTheDecodeWorkBudgetFails(t *testing.T) {
	const budget = 1 << 20
	body := `{"status":200,"requestId":"r","result":[` + strings.Repeat(`{},`, 200_000) + `{}]}`
	c := newClient(cloudapi.Options{MaxDecodeWork: budget, Transport: respondWith(io.NopCloser(strings.NewReader(body)))})
	var work int64
	seen := 0
	_, err := c.ListPipes(context.Background(), "http://api.example.invalid", testCreds, orgID, svcID, pipeOptions{
		Each: func(*swv1.Pipe) { seen++ },
		Work: func(units int64) { work = units },
	})
	if e := asError(t, err); e.Reason != cloudapi.ReasonDecodeBudgetExceeded || !errors.Is(err, lenient.ErrWorkBudget) {
		t.Fatalf("got %v, want DecodeBudgetExceeded", err)
	}
	if !strings.Contains(err.Error(), "decode work budget exceeded") {
		t.Errorf("message %q does not say why", err)
	}
	if seen >= 200_000 || work > budget+lenient.ItemWork+lenient.ItemByteWork*64 {
		t.Errorf("decoded %d items for %d units of work: it did not stop at the budget of %d", seen, work, budget)
	}
}
