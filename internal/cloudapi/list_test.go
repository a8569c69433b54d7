package cloudapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/cloudapi/lenient"
)

func listPipesWith(t *testing.T, body string, opts pipeOptions) (cloudapi.List[swv1.Pipe], error) {
	t.Helper()
	srv, _ := serve(t, reply{status: 200, contentType: "application/json", body: body})
	return newClient(cloudapi.Options{}).ListPipes(context.Background(), srv.URL, testCreds, orgID, svcID, opts)
}

func pipeIDs(pipes []swv1.Pipe) string {
	out := make([]string, len(pipes))
	for i, p := range pipes {
		out[i] = "-"
		if p.ID != nil {
			out[i] = *p.ID
		}
	}
	return strings.Join(out, " ")
}

func TestListEnvelopeMembersInAnyOrderAndUnknownOnesSkipped(t *testing.T) {
	bodies := map[string]string{
		"spec order":     `{"status":200,"requestId":"r1","result":[{"id":"b"},{"id":"a"}]}`,
		"result first":   `{"result":[{"id":"b"},{"id":"a"}],"requestId":"r1","status":200}`,
		"status omitted": `{"result":[{"id":"b"},{"id":"a"}],"requestId":"r1"}`,
		"status null":    `{"status":null,"requestId":"r1","result":[{"id":"b"},{"id":"a"}]}`,
		"unknown members of every kind": `{"nextPage":{"cursor":[1,{"x":null}],"n":1e999},"status":200,` +
			`"warnings":["a",{"b":[]}],"requestId":"r1","big":123456789012345678901234567890,` +
			`"result":[{"id":"b"},{"id":"a"}],"t":true,"s":"}]"}`,
		"white space around": " \n{ \"requestId\" : \"r1\" , \"result\" : [ {\"id\":\"b\"} , {\"id\":\"a\"} ] }\n\n",
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			got, err := listPipesWith(t, body, pipeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.RequestID != "r1" || pipeIDs(got.Items) != "a b" || got.Total != 2 {
				t.Errorf("got requestId %q, items %q, total %d; want r1, \"a b\", 2", got.RequestID, pipeIDs(got.Items), got.Total)
			}
		})
	}
}

// Whatever the order of the members, an unusable response is an
// InvalidResponse that quotes the request ID.
func TestListUnusableResponses(t *testing.T) {
	tests := []struct {
		name, body, requestID string
	}{
		{"status after result disagrees", `{"result":[{"id":"a"}],"requestId":"r1","status":404}`, "r1"},
		{"status before request ID disagrees", `{"status":500,"result":[],"requestId":"r2"}`, "r2"},
		{"wrong type for status", `{"status":"200","result":[],"requestId":"r3"}`, "r3"},
		{"wrong type for request ID", `{"status":200,"result":[],"requestId":7}`, ""},
		{"two result members", `{"result":[],"requestId":"r5","result":[]}`, "r5"},
		{"result a string", `{"requestId":"r7","result":"[]"}`, "r7"},
		{"no result", `{"requestId":"r8","status":200}`, "r8"},
		{"a second document after the envelope", `{"requestId":"r9","result":[]}{}`, "r9"},
		{"garbage after the envelope", `{"requestId":"r10","result":[]} x`, "r10"},
		{"not an object", `[{"id":"a"}]`, ""},
		{"cut short inside an item", `{"requestId":"r11","result":[{"id":"a"},{"id":`, "r11"},
		{"bad syntax inside an item", `{"requestId":"r12","result":[{"id":"a"},{"id" "b"}]}`, "r12"},
		{"empty body", ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := listPipesWith(t, tt.body, pipeOptions{})
			e := asError(t, err)
			if e.Reason != cloudapi.ReasonInvalidResponse || e.RequestID != tt.requestID {
				t.Errorf("got %s with requestId %q, want InvalidResponse with %q (%v)", e.Reason, e.RequestID, tt.requestID, err)
			}
		})
	}
}

func pipeNames(pipes []swv1.Pipe) string {
	out := make([]string, len(pipes))
	for i, p := range pipes {
		out[i] = *p.Name
	}
	return strings.Join(out, ",")
}

// Of pipes that share an id, the one kept depends on their content, not on
// their order; items without an id are ordered by content too. Each sees
// every id once, at its first occurrence.
func TestListDuplicatesAreChosenByContent(t *testing.T) {
	forward := `{"status":200,"result":[{"id":"b","name":"b running"},{"name":"no id"},{"id":"a","name":"a"},` +
		`{"id":"b","name":"b stopped"},{"name":"no id"},{"id":"","name":"empty id"}]}`
	backward := `{"status":200,"result":[{"id":"","name":"empty id"},{"name":"no id"},{"id":"b","name":"b stopped"},` +
		`{"id":"a","name":"a"},{"name":"no id"},{"id":"b","name":"b running"}]}`
	var each []swv1.Pipe
	got, err := listPipesWith(t, forward, pipeOptions{Each: func(p *swv1.Pipe) { each = append(each, *p) }})
	if err != nil {
		t.Fatal(err)
	}
	if want := "b running,no id,a,no id,empty id"; pipeNames(each) != want {
		t.Errorf("Each saw %q, want %q (response order, duplicates left out)", pipeNames(each), want)
	}
	other, err := listPipesWith(t, backward, pipeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, other) {
		t.Errorf("in one order kept %q of %d, in the other %q of %d", pipeNames(got.Items), got.Total, pipeNames(other.Items), other.Total)
	}
	// {"id":"b","name":"b running"} sorts before {"id":"b","name":"b stopped"}.
	if names := pipeNames(got.Items); !strings.HasSuffix(names, ",a,b running") || got.Total != 5 {
		t.Errorf("kept %q of %d, want the three without an id, a, b running, of 5", names, got.Total)
	}
}

// KeepBytes keeps the failing pipes first (d is Failed), then a prefix of
// the id order, and lists them by id (issue 39: it kept "a b", the id
// prefix); Total and Each still cover every pipe, so counts by state stay
// exact.
func TestListKeepBytesKeepsAPrefixAndCountsEverything(t *testing.T) {
	body := `{"status":200,"result":[{"id":"c","state":"Running"},{"id":"a","state":"Running"},` +
		`{"id":"b","state":"Stopped"},{"id":"d","state":"Failed"}]}`
	// {"id":"a","state":"Running"} is 28 bytes, 29 with its comma: each item
	// counts the least charge of 64 bytes.
	byState := map[string]int{}
	got, err := listPipesWith(t, body, pipeOptions{KeepBytes: 2*64 + 63, Each: func(p *swv1.Pipe) { byState[*p.State]++ }})
	if err != nil {
		t.Fatal(err)
	}
	if pipeIDs(got.Items) != "a d" || got.Total != 4 {
		t.Errorf("kept %q of %d, want \"a d\" of 4", pipeIDs(got.Items), got.Total)
	}
	if byState["Running"] != 2 || byState["Stopped"] != 1 || byState["Failed"] != 1 {
		t.Errorf("counted %v", byState)
	}
}

// KeepEncoded gives the same items as a plain call, still encoded, and
// no decoded Items beside them.
func TestListKeepEncodedGivesTheSameItems(t *testing.T) {
	body := `{"status":200,"result":[{"id":"c","state":"Running"},{"id":"a","state":"Running"},` +
		`{"id":"b","state":"Stopped"},{"id":"d","state":"Failed"}]}`
	plain, err := listPipesWith(t, body, pipeOptions{KeepBytes: 2*64 + 63})
	if err != nil {
		t.Fatal(err)
	}
	encoded, err := listPipesWith(t, body, pipeOptions{KeepBytes: 2*64 + 63, KeepEncoded: true})
	if err != nil {
		t.Fatal(err)
	}
	items, err := encoded.Encoded.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if encoded.Items != nil || pipeIDs(items) != pipeIDs(plain.Items) || pipeIDs(items) != "a d" || encoded.Total != plain.Total {
		t.Errorf("KeepEncoded kept %q (and Items %v) of %d, a plain call %q of %d", pipeIDs(items), encoded.Items, encoded.Total, pipeIDs(plain.Items), plain.Total)
	}
}

// The connection string is a credential: nothing outside the client sees it,
// not the caller's Each, not the items returned.
func TestListPipesRedactsTheConnectionStringInsideTheClient(t *testing.T) {
	const secret = "DefaultEndpointsProtocol=https;AccountKey=c2VjcmV0"
	body := `{"status":200,"result":[` +
		`{"id":"a","source":{"objectStorage":{"connectionString":"` + secret + `"}}},` +
		`{"id":"b","source":{"objectStorage":{"connectionString":""}}},` +
		`{"id":"c","source":{"objectStorage":{"connectionString":null}}},` +
		`{"id":"d","source":{"objectStorage":{"connectionString":"` + secret + `"}}}]}`
	var each []byte
	// The budget keeps a, b and c; d is only shown to Each.
	got, err := listPipesWith(t, body, pipeOptions{KeepBytes: 300, Each: func(p *swv1.Pipe) {
		b, _ := json.Marshal(p)
		each = append(each, b...)
	}})
	if err != nil {
		t.Fatal(err)
	}
	kept := mustJSON(t, got.Items, "")
	for what, b := range map[string][]byte{"kept items": kept, "what Each saw": each} {
		if strings.Contains(string(b), "AccountKey") {
			t.Errorf("%s hold the connection string: %s", what, b)
		}
	}
	if pipeIDs(got.Items) != "a b c" {
		t.Fatalf("kept %q, want \"a b c\"", pipeIDs(got.Items))
	}
	for i, want := range []*string{ptr("<redacted>"), ptr(""), nil} {
		if got := got.Items[i].Source.ObjectStorage.ConnectionString; !equalPtr(got, want) {
			t.Errorf("pipe %d: connectionString %s, want %s", i, show(got), show(want))
		}
	}
	if !strings.Contains(string(each), `"id":"d","source":{"objectStorage":{"connectionString":"\u003credacted\u003e"}}`) {
		t.Errorf("Each did not see pipe d redacted: %s", each)
	}
}

func equalPtr(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func show(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func TestGetAlertDropsAnErrorMemberFromTheCloud(t *testing.T) {
	srv, _ := serve(t, reply{status: 200, body: `{"data":{"id":"a1","error":{"code":5},"name":"n"}}`})
	got, err := newClient(cloudapi.Options{}).GetAlert(context.Background(), srv.URL, testToken, "a1")
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, got.Alert, swv1.AlertStatus{ID: "a1", Name: ptr("n")})
}

// endlessBody is an endless alert body that counts what was read of it.
type endlessBody struct{ read int }

func (b *endlessBody) Read(p []byte) (int, error) {
	n := 0
	if b.read == 0 {
		n = copy(p, `{"data":{"message":"`)
	}
	for i := n; i < len(p); i++ {
		p[i] = 'x'
	}
	b.read += len(p)
	return len(p), nil
}

func (b *endlessBody) Close() error { return nil }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// respondWith returns a transport that answers 200 with body, its length
// unknown, so the client has to read it to measure it.
func respondWith(body io.ReadCloser) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: body, ContentLength: -1, Request: r}, nil
	})
}

func TestGetAlertReadsNoFurtherThanItsCap(t *testing.T) {
	for _, tt := range []struct {
		name  string
		limit int64
		cap   int
	}{
		{"default", 0, cloudapi.DefaultMaxAlertResponseBytes},
		{"set", 1000, 1000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := &endlessBody{}
			c := newClient(cloudapi.Options{MaxAlertResponseBytes: tt.limit, Transport: respondWith(body)})
			_, err := c.GetAlert(context.Background(), "http://alerts.example.invalid", testToken, "a1")
			if e := asError(t, err); e.Reason != cloudapi.ReasonInvalidResponse || !strings.Contains(err.Error(), "too large") {
				t.Errorf("got %v, want InvalidResponse: too large", err)
			}
			// One byte past the cap tells a body of exactly the cap from a
			// larger one.
			if body.read > tt.cap+1 {
				t.Errorf("read %d bytes of the body, cap %d", body.read, tt.cap)
			}
		})
	}
}

func TestGetAlertCapIsInclusive(t *testing.T) {
	const limit = 1000
	doc := `{"data":{"id":"a1"}}`
	for _, tt := range []struct {
		size int
		ok   bool
	}{{limit, true}, {limit + 1, false}} {
		body := io.NopCloser(strings.NewReader(doc + strings.Repeat(" ", tt.size-len(doc))))
		c := newClient(cloudapi.Options{MaxAlertResponseBytes: limit, Transport: respondWith(body)})
		_, err := c.GetAlert(context.Background(), "http://alerts.example.invalid", testToken, "a1")
		if (err == nil) != tt.ok {
			t.Errorf("body of %d bytes with a cap of %d: %v", tt.size, limit, err)
		}
	}
}

// A body that stops arriving is Unreachable, not InvalidResponse, also while
// it is being decoded as a stream.
func TestListBodyReadFailureIsUnreachable(t *testing.T) {
	body := io.NopCloser(io.MultiReader(strings.NewReader(`{"status":200,"requestId":"r","result":[{"id":"a"},`), failingReader{}))
	c := newClient(cloudapi.Options{Transport: respondWith(body)})
	_, err := c.ListPipes(context.Background(), "http://api.example.invalid", testCreds, orgID, svcID, pipeOptions{})
	if e := asError(t, err); e.Reason != cloudapi.ReasonUnreachable || !errors.Is(err, errConnectionReset) {
		t.Errorf("got %v, want Unreachable wrapping the read error", err)
	}
}

// The list cap holds while streaming: a body without a Content-Length that
// runs past MaxResponseBytes is InvalidResponse.
func TestListBodyOverTheCapWhileStreaming(t *testing.T) {
	body := io.NopCloser(strings.NewReader(`{"status":200,"result":[` + strings.Repeat(`{"id":"a"},`, 200) + `{}]}`))
	c := newClient(cloudapi.Options{MaxResponseBytes: 1024, Transport: respondWith(body)})
	_, err := c.ListPipes(context.Background(), "http://api.example.invalid", testCreds, orgID, svcID, pipeOptions{})
	if e := asError(t, err); e.Reason != cloudapi.ReasonInvalidResponse || !strings.Contains(err.Error(), "too large") {
		t.Errorf("got %v, want InvalidResponse: too large", err)
	}
}

var errConnectionReset = errors.New("connection reset by peer")

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errConnectionReset }

// bigPipeList is 50 small pipes and, in their midst, one Postgres CDC pipe
// of mappings table mappings (about 1 MB for 4000).
func bigPipeList(mappings int) string {
	var b strings.Builder
	b.WriteString(`{"status":200,"result":[`)
	for i := range 51 {
		if i > 0 {
			b.WriteString(",")
		}
		if i != 20 {
			fmt.Fprintf(&b, `{"id":"p-%02d","name":"pipe %d","state":"Running","source":{"kafka":{"topics":"t%d"}}}`, i, i, i)
			continue
		}
		fmt.Fprintf(&b, `{"id":"p-%02d","name":"big","state":"Running","source":{"postgres":{"host":"db","tableMappings":[`, i)
		for m := range mappings {
			if m > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"sourceSchemaName":"public","sourceTable":"table_with_a_long_name_%06d","targetTable":"public_table_with_a_long_name_%06d","tableEngine":"ReplacingMergeTree","partitionKey":"created_at_%06d","excludedColumns":["secret_a","secret_b","secret_c"],"sortingKeys":["id","tenant"]}`, m, m, m)
		}
		b.WriteString(`]}}}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

// One big pipe never hides the others: it is slimmed, its mappings cut and
// counted, and every pipe after it is still kept whole.
func TestListSlimsABigPipeRatherThanDropIt(t *testing.T) {
	body := bigPipeList(4000)
	if len(body) < 900<<10 {
		t.Fatalf("body is %d bytes, want about 1 MB", len(body))
	}
	got, err := listPipesWith(t, body, pipeOptions{KeepBytes: 200 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != 51 || got.Total != 51 {
		t.Fatalf("kept %d of %d pipes, want all 51", len(got.Items), got.Total)
	}
	big := got.Items[20]
	kept := len(big.Source.Postgres.TableMappings)
	if *big.Name != "big" || kept == 0 || kept >= 4000 || big.Omitted["source.postgres.tableMappings"] != int32(4000-kept) {
		t.Errorf("big pipe kept %d mappings, omitted %v", kept, big.Omitted)
	}
	for i, p := range got.Items {
		if i != 20 && (p.Omitted != nil || p.Source == nil || p.Source.Kafka == nil) {
			t.Errorf("pipe %d changed: %+v", i, p)
		}
	}
}

// Replace follows the duplicate the list keeps, in either order, so counts
// made in Each count what status shows.
func TestListReplaceFollowsTheKeptDuplicate(t *testing.T) {
	running := `{"id":"a","name":"a","state":"Running"}`
	stopped := `{"id":"a","name":"a","state":"Stopped"}`
	for _, order := range [][2]string{{running, stopped}, {stopped, running}} {
		states := map[string]int{}
		got, err := listPipesWith(t, `{"status":200,"result":[`+order[0]+`,{"id":"b","state":"Paused"},`+order[1]+`]}`, pipeOptions{
			Each:    func(p *swv1.Pipe) { states[*p.State]++ },
			Replace: func(old, p *swv1.Pipe) { states[*old.State]--; states[*p.State]++ },
		})
		if err != nil {
			t.Fatal(err)
		}
		if kept := *got.Items[0].State; kept != "Running" || states["Running"] != 1 || states["Stopped"] != 0 || states["Paused"] != 1 {
			t.Errorf("kept %s, counted %v, want Running counted once", kept, states)
		}
	}
}

// Slimming is decode work like any other: the answer's work budget and the
// namespace's share (told through Work) count it, so that big items cannot
// buy a tenant CPU that the budget does not see.
func TestSlimmingIsChargedToTheAnswersWork(t *testing.T) {
	body := bigPipeList(4000)
	work := func(keepBytes int) (int64, cloudapi.List[swv1.Pipe]) {
		var used int64
		list, err := listPipesWith(t, body, pipeOptions{KeepBytes: keepBytes, Work: func(n int64) { used = n }})
		if err != nil {
			t.Fatal(err)
		}
		return used, list
	}
	whole, _ := work(0)
	slimmed, list := work(200 << 10)
	kept, err := json.Marshal(list.Items[20])
	if err != nil {
		t.Fatal(err)
	}
	// At the least, the slimmed pipe is sized and encoded once more.
	if want := int64(lenient.ItemByteWork * len(kept)); slimmed-whole < want {
		t.Errorf("the answer cost %d units kept whole and %d with its big pipe slimmed to %d bytes, want %d more at least",
			whole, slimmed, len(kept), want)
	}
}
