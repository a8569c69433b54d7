package cloudapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

func ptr[T any](v T) *T { return &v }

// Shorthands for the list options of the two list calls.
type (
	pipeOptions     = cloudapi.ListOptions[swv1.Pipe]
	endpointOptions = cloudapi.ListOptions[swv1.ReversePrivateEndpoint]
)

func dec(s string) *swv1.Decimal { d := swv1.Decimal(s); return &d }

const (
	orgID = "7f0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d"
	svcID = "4e2c6a1b-9d8f-4c3b-a2e1-0f9e8d7c6b5a"
)

// The credentials of most tests, and their secret parts in clear.
const (
	testKeySecret  = "fake-key-secret"
	testTokenValue = "fake-alert-token"
)

var (
	testCreds = cloudapi.NewBasicCredentials("fake-key-id", testKeySecret)
	testToken = cloudapi.NewBearerToken(testTokenValue)
)

// newClient returns a client with the rate limits off, so tests only wait
// when they test the limiter.
func newClient(opts cloudapi.Options) *cloudapi.Client {
	if opts.Budgets == nil {
		off := ratebudget.RateLimit{Requests: -1}
		opts.Budgets = cloudapi.NewBudgets(off, off)
	}
	return cloudapi.New(opts)
}

// reply is a canned HTTP response.
type reply struct {
	status      int
	contentType string
	header      map[string]string
	body        string
}

// serve starts a server that answers every request with r and records the
// requests it got.
func serve(t *testing.T, r reply) (*httptest.Server, *recorder) {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec.add(req)
		if r.contentType != "" {
			w.Header().Set("Content-Type", r.contentType)
		}
		for k, v := range r.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(r.status)
		_, _ = w.Write([]byte(r.body))
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

// recorder keeps the requests a test server received.
type recorder struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (r *recorder) add(req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req.Clone(req.Context()))
}

func (r *recorder) all() []*http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*http.Request(nil), r.reqs...)
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// assertEqual compares got and want, showing both as JSON on failure.
func assertEqual(t *testing.T, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("mismatch\n got: %s\nwant: %s", mustJSON(t, got, "  "), mustJSON(t, want, "  "))
	}
}

// mustJSON encodes v as JSON, indented by indent when it is not empty,
// failing the test when v cannot be encoded.
func mustJSON(t testing.TB, v any, indent string) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", indent)
	if indent == "" {
		b, err = json.Marshal(v)
	}
	if err != nil {
		t.Fatalf("encode %T: %v", v, err)
	}
	return b
}

// observation is one ObserveRequest call.
type observation struct {
	api, operation, code string
	duration             time.Duration
}

// observer records observations.
type observer struct {
	mu  sync.Mutex
	obs []observation
}

func (o *observer) ObserveRequest(api, operation, code string, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.obs = append(o.obs, observation{api, operation, code, d})
}

func (o *observer) codes() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for _, ob := range o.obs {
		out = append(out, ob.api+"/"+ob.operation+"/"+ob.code)
	}
	return out
}
