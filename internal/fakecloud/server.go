// Package fakecloud is a fake of the cloud's management and alert APIs, for
// tests, the demo and benchmarks. It implements the three read operations of
// the cloud API spec exactly (paths, methods, authentication, the management
// envelope with status and a fresh UUID v4 requestId, 404 for unknown
// resources, JSON content type), and the alert routes the services serve
// today (cloud-apis-today.md): the alert API's paged list, and a service's
// alerts on the management API, one and paged, in its envelope, with the
// older answers and the faults of paging behind switches (AlertListRoute,
// AlertListChange). It adds fault switches, request budgets per credential
// and a call log so that tests and benchmarks can drive and observe a
// client.
//
// Both APIs are served from one listener: management under /v1/..., alerts
// under /api/v2/..., so the same URL is the management and the alert base
// URL.
//
// Use [Start] in tests (like httptest.NewServer), or [New] and
// [Server.Handler] to serve it yourself, as cmd/fakecloud does.
package fakecloud

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Operation names one of the fake's operations.
type Operation string

// The operations, named as cloudapi names them for its Observer.
const (
	OpListPipes                   Operation = "list_pipes"
	OpListReversePrivateEndpoints Operation = "list_reverse_private_endpoints"
	OpGetAlert                    Operation = "get_alert"
)

// Call is one request the fake received for an operation.
type Call struct {
	Operation      Operation
	Method         string
	Path           string // escaped, as sent
	Query          string // the raw query, as sent (a list's limit and offset)
	OrganizationID string // for management operations
	ServiceID      string // for management operations
	AlertID        string // for OpGetAlert and OpGetServiceAlert
	UserAgent      string
	// KeyFingerprint identifies the credential sent (see
	// ManagementKey.Fingerprint and TokenFingerprint); "" when none was.
	KeyFingerprint string
	Time           time.Time
	Status         int // the status the fake answered with; 0 if it hung until the client gave up
}

// Server is a fake cloud. It is safe for concurrent use; its setters may be
// called while requests are served.
type Server struct {
	// URL is the base URL of both APIs, e.g. http://127.0.0.1:41234, when
	// started with Start; empty otherwise.
	URL string

	mu          sync.Mutex
	data        Data
	faults      map[Operation][]*Fault
	calls       []Call
	now         func() time.Time
	mgmtBudget  budgetCounter
	alertBudget budgetCounter
	// listChanges are the pending changes of the alert lists between pages.
	listChanges map[Operation]*alertListChange

	mux      *http.ServeMux
	done     chan struct{}
	doneOnce sync.Once
	inFlight sync.WaitGroup
	httpSrv  *http.Server
}

// New returns a fake cloud serving a copy of data, not yet listening.
func New(data Data) *Server {
	s := &Server{
		data:   data.clone(),
		faults: map[Operation][]*Fault{},
		now:    time.Now,
		done:   make(chan struct{}),
	}
	s.mux = http.NewServeMux()
	routes := map[string]http.HandlerFunc{
		"/v1/organizations/{org}/services/{svc}/pipes":                        s.listPipes,
		"/v1/organizations/{org}/services/{svc}/pipesReversePrivateEndpoints": s.listReversePrivateEndpoints,
		"/api/v2/alerts/{id}": s.getAlert,
		"/api/v2/alerts":      s.listAlerts,
		"/v1/organizations/{org}/services/{svc}/observability/alerts/{id}": s.getServiceAlert,
		"/v1/organizations/{org}/services/{svc}/observability/alerts":      s.listServiceAlerts,
	}
	for path, h := range routes {
		s.mux.HandleFunc("GET "+path, h) // GET also serves HEAD
		s.mux.HandleFunc(path, methodNotAllowed)
	}
	s.mux.HandleFunc("/", s.notFound)
	return s
}

// Start returns a fake cloud serving a copy of data on 127.0.0.1 at a free
// port; its URL is in s.URL. Call Close when done.
func Start(data Data) *Server {
	s := New(data)
	var lc net.ListenConfig
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("fakecloud: listen: %v", err))
	}
	s.URL = "http://" + ln.Addr().String()
	s.httpSrv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.httpSrv.Serve(ln) }()
	return s
}

// Handler returns the fake's HTTP handler.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.inFlight.Add(1)
		defer s.inFlight.Done()
		s.mux.ServeHTTP(w, r)
	})
}

// Close ends hanging and delayed requests, stops the listener of a started
// server, and waits for handlers to return.
func (s *Server) Close() {
	s.doneOnce.Do(func() { close(s.done) })
	if s.httpSrv != nil {
		_ = s.httpSrv.Close()
	}
	s.inFlight.Wait()
}

// Data returns a copy of the data being served.
func (s *Server) Data() Data {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.data.clone()
}

// SetData replaces all the data being served with a copy of d.
func (s *Server) SetData(d Data) {
	d = d.clone()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data = d
}

// SetClock replaces the clock that stamps calls and places them in budget
// windows, so that tests need not sleep.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// SetManagementBudget enforces b on the management API, per key: a call past
// the budget is answered 429 with a Retry-After of the seconds left in the
// window, before faults and credentials are looked at, as a rate limiter in
// front of the service would. The zero Budget turns enforcement off.
func (s *Server) SetManagementBudget(b Budget) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mgmtBudget = budgetCounter{budget: b}
}

// SetAlertBudget enforces b on the alert API, per token, as
// SetManagementBudget does on the management API.
func (s *Server) SetAlertBudget(b Budget) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.alertBudget = budgetCounter{budget: b}
}

// SetManagementKey sets the key the management API accepts; the keys of
// Data.MoreManagementKeys stay accepted.
func (s *Server) SetManagementKey(keyID, keySecret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data.ManagementKey = ManagementKey{KeyID: keyID, KeySecret: keySecret}
}

// SetAlertToken sets the token the alert API accepts; the tokens of
// Data.MoreAlertTokens stay accepted.
func (s *Server) SetAlertToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data.AlertToken = token
}

// SetService creates or replaces a service with a copy of svc.
func (s *Server) SetService(organizationID, serviceID string, svc Service) {
	svc = svc.clone()
	s.updateService(organizationID, serviceID, func(*Service) Service { return svc })
}

// DeleteService removes a service, so that its operations answer 404.
func (s *Server) DeleteService(organizationID, serviceID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.data.Organizations[organizationID], serviceID)
}

// SetPipes sets a service's pipes (a copy), creating the service if needed.
func (s *Server) SetPipes(organizationID, serviceID string, pipes []map[string]any) {
	pipes = cloneObjects(pipes)
	s.updateService(organizationID, serviceID, func(svc *Service) Service {
		svc.Pipes = pipes
		return *svc
	})
}

// SetReversePrivateEndpoints sets a service's reverse private endpoints (a
// copy), creating the service if needed.
func (s *Server) SetReversePrivateEndpoints(organizationID, serviceID string, endpoints []map[string]any) {
	endpoints = cloneObjects(endpoints)
	s.updateService(organizationID, serviceID, func(svc *Service) Service {
		svc.ReversePrivateEndpoints = endpoints
		return *svc
	})
}

func (s *Server) updateService(organizationID, serviceID string, update func(*Service) Service) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.data.Organizations == nil {
		s.data.Organizations = map[string]map[string]Service{}
	}
	if s.data.Organizations[organizationID] == nil {
		s.data.Organizations[organizationID] = map[string]Service{}
	}
	svc := s.data.Organizations[organizationID][serviceID]
	s.data.Organizations[organizationID][serviceID] = update(&svc)
}

// SetAlert creates or replaces an alert with a copy of alert.
func (s *Server) SetAlert(alertID string, alert map[string]any) {
	alert = cloneObject(alert)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.data.Alerts == nil {
		s.data.Alerts = map[string]map[string]any{}
	}
	s.data.Alerts[alertID] = alert
}

// DeleteAlert removes an alert, so that fetching it answers 404.
func (s *Server) DeleteAlert(alertID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.data.Alerts, alertID)
}

// Calls returns how many requests the fake received for op, whatever it
// answered.
func (s *Server) Calls(op Operation) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		if c.Operation == op {
			n++
		}
	}
	return n
}

// CallLog returns every request received for an operation, oldest first.
func (s *Server) CallLog() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// ResetCalls forgets the calls received so far.
func (s *Server) ResetCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = nil
}

// record logs a call and returns its index, to set its status later.
func (s *Server) record(op Operation, r *http.Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, Call{
		Operation:      op,
		Method:         r.Method,
		Path:           r.URL.EscapedPath(),
		Query:          r.URL.RawQuery,
		OrganizationID: r.PathValue("org"),
		ServiceID:      r.PathValue("svc"),
		AlertID:        r.PathValue("id"),
		UserAgent:      r.UserAgent(),
		KeyFingerprint: fingerprint(r.Header.Get("Authorization")),
		Time:           s.now(),
	})
	return len(s.calls) - 1
}

func (s *Server) setStatus(i, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < len(s.calls) { // ResetCalls may have run meanwhile
		s.calls[i].Status = status
	}
}

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

// WriteHeader records the first status code, then passes it on.
func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// serve runs one operation: record, budget, faults, authentication, then
// answer.
func (s *Server) serve(op Operation, w http.ResponseWriter, r *http.Request, answer func(w http.ResponseWriter, r *http.Request)) {
	i := s.record(op, r)
	sw := &statusWriter{ResponseWriter: w}
	defer func() { s.setStatus(i, sw.status) }()

	if wait, ok := s.admit(op, r); !ok {
		sw.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(wait)))
		s.writeError(sw, op, http.StatusTooManyRequests, "request budget of this credential exhausted")
		return
	}
	f, ok := s.takeFault(op, r.PathValue("id"), basicKeyID(r))
	if ok {
		if !s.applyFault(sw, r, op, f) {
			return
		}
	}
	if !s.authorized(op, r) {
		s.writeError(sw, op, http.StatusUnauthorized, "invalid or missing credentials")
		return
	}
	answer(sw, r)
}

func (s *Server) listPipes(w http.ResponseWriter, r *http.Request) {
	s.serve(OpListPipes, w, r, func(w http.ResponseWriter, r *http.Request) {
		s.answerList(w, r, OpListPipes, func(svc Service) []map[string]any { return svc.Pipes })
	})
}

func (s *Server) listReversePrivateEndpoints(w http.ResponseWriter, r *http.Request) {
	s.serve(OpListReversePrivateEndpoints, w, r, func(w http.ResponseWriter, r *http.Request) {
		s.answerList(w, r, OpListReversePrivateEndpoints, func(svc Service) []map[string]any { return svc.ReversePrivateEndpoints })
	})
}

func (s *Server) getAlert(w http.ResponseWriter, r *http.Request) {
	s.serve(OpGetAlert, w, r, func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		alert, ok := s.data.Alerts[r.PathValue("id")]
		var body []byte
		var err error
		if ok {
			// Marshaled under the lock: the map may be replaced, not changed,
			// but marshaling here keeps that reasoning out of the way.
			body, err = json.Marshal(map[string]any{"data": shapeAlert(alert, s.data.AlertShape)})
		}
		s.mu.Unlock()
		switch {
		case !ok:
			s.writeError(w, OpGetAlert, http.StatusNotFound, "alert not found")
		case err != nil:
			s.writeError(w, OpGetAlert, http.StatusInternalServerError, "fake data cannot be marshaled")
		default:
			writeJSON(w, http.StatusOK, body)
		}
	})
}

func (s *Server) answerList(w http.ResponseWriter, r *http.Request, op Operation, items func(Service) []map[string]any) {
	s.mu.Lock()
	svc, ok := s.data.Organizations[r.PathValue("org")][r.PathValue("svc")]
	var body []byte
	var err error
	if ok {
		result := items(svc)
		if result == nil {
			result = []map[string]any{}
		}
		body, err = json.Marshal(map[string]any{"status": http.StatusOK, "requestId": uuid.NewString(), "result": result})
	}
	s.mu.Unlock()
	switch {
	case !ok:
		s.writeError(w, op, http.StatusNotFound, "organization or service not found")
	case err != nil:
		s.writeError(w, op, http.StatusInternalServerError, "fake data cannot be marshaled")
	default:
		writeJSON(w, http.StatusOK, body)
	}
}

// methodNotAllowed answers any method but GET on an operation's path.
func methodNotAllowed(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Allow", "GET, HEAD")
	writeJSON(w, http.StatusMethodNotAllowed, errorBody(OpListPipes, http.StatusMethodNotAllowed, "method not allowed"))
}

// notFound answers paths that are no operation, in the management style.
func (s *Server) notFound(w http.ResponseWriter, _ *http.Request) {
	s.writeError(w, OpListPipes, http.StatusNotFound, "no such endpoint")
}

// admit counts a call against its API's budget for the credential it
// carries, and says how long to wait when it does not fit.
func (s *Server) admit(op Operation, r *http.Request) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	budget := &s.mgmtBudget
	if isAlertAPI(op) {
		budget = &s.alertBudget
	}
	return budget.admit(fingerprint(r.Header.Get("Authorization")), s.now())
}

// authorized checks the Authorization header: exactly HTTP Basic with an
// accepted management key for management operations, and exactly Bearer
// with an accepted alert token for the alert operation. The other scheme is
// refused.
func (s *Server) authorized(op Operation, r *http.Request) bool {
	s.mu.Lock()
	keys := append([]ManagementKey{s.data.ManagementKey}, s.data.MoreManagementKeys...)
	tokens := append([]string{s.data.AlertToken}, s.data.MoreAlertTokens...)
	s.mu.Unlock()
	scheme, value, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if isAlertAPI(op) {
		return scheme == "Bearer" && slices.ContainsFunc(tokens, func(t string) bool { return t != "" && equal(value, t) })
	}
	if scheme != "Basic" {
		return false
	}
	return slices.ContainsFunc(keys, func(k ManagementKey) bool {
		return k.KeyID != "" && equal(value, base64.StdEncoding.EncodeToString([]byte(k.KeyID+":"+k.KeySecret)))
	})
}

// basicKeyID is the key ID of a call's Basic credentials, "" when it has
// none; faults may be limited to one key.
func basicKeyID(r *http.Request) string {
	keyID, _, ok := r.BasicAuth()
	if !ok {
		return ""
	}
	return keyID
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// isAlertAPI tells which API's error style an operation uses.
func isAlertAPI(op Operation) bool { return op == OpGetAlert || op == OpListAlerts }

// errorBody is an API's error body: {"status":..,"requestId":..,"error":..}
// for the management API, {"message":..} for the alert API.
func errorBody(op Operation, status int, msg string) []byte {
	if isAlertAPI(op) {
		b, _ := json.Marshal(alertError{Message: msg}) // cannot fail: strings only
		return b
	}
	b, _ := json.Marshal(managementError{Error: msg, RequestID: uuid.NewString(), Status: status}) // cannot fail: strings and an int
	return b
}

// managementError is the management API's error body. The fields are in
// the order the keys of a map used to come out in, so the bytes served do
// not change.
type managementError struct {
	Error     string `json:"error"`
	RequestID string `json:"requestId"`
	Status    int    `json:"status"`
}

// alertError is the alert API's error body.
type alertError struct {
	Message string `json:"message"`
}

func (s *Server) writeError(w http.ResponseWriter, op Operation, status int, msg string) {
	if status == http.StatusUnauthorized {
		scheme := `Basic realm="management API"`
		if isAlertAPI(op) {
			scheme = `Bearer realm="alert API"`
		}
		w.Header().Set("WWW-Authenticate", scheme)
	}
	writeJSON(w, status, errorBody(op, status, msg))
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	if w.Header().Get("X-Request-ID") == "" {
		w.Header().Set("X-Request-ID", uuid.NewString())
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// sleep waits for d, the request's end or the server's Close, whichever
// comes first; it reports whether the full d passed.
func (s *Server) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-s.done:
	}
	return false
}
