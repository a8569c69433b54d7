package fakecloud

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Fault changes how the fake answers an operation. Faults apply before the
// credentials are checked, so a fault answers even a call with a wrong key,
// as a CDN or a rate limiter in front of the service would.
//
// A fault that only sets Latency, RetryAfter, Headers or ContentType delays or
// decorates the normal answer. One that sets Status (other than 2xx), Body,
// Malformed or OversizedBytes replaces the answer.
type Fault struct {
	// Status is the HTTP status to answer with; 0 means 200 when the fault
	// replaces the answer.
	Status int `json:"status,omitempty"`
	// RetryAfter, when set, is sent as the Retry-After header as given
	// (seconds or an HTTP date).
	RetryAfter string `json:"retryAfter,omitempty"`
	// Headers are set on the answer as given, such as a Location on a 3xx
	// or a WWW-Authenticate challenge on a 401.
	Headers map[string]string `json:"headers,omitempty"`
	// Latency delays the answer.
	Latency time.Duration `json:"latency,omitempty"`
	// Body replaces the response body (plain text, an HTML page, any JSON).
	Body string `json:"body,omitempty"`
	// ContentType replaces the Content-Type header (default
	// application/json).
	ContentType string `json:"contentType,omitempty"`
	// Malformed answers with truncated JSON.
	Malformed bool `json:"malformed,omitempty"`
	// OversizedBytes answers with a valid JSON body of at least this many
	// bytes, streamed without a Content-Length.
	OversizedBytes int64 `json:"oversizedBytes,omitempty"`
	// Hang answers nothing until the client gives up or the server closes.
	Hang bool `json:"hang,omitempty"`
	// Times is how many calls the fault applies to; 0 means until cleared.
	Times int `json:"times,omitempty"`
	// AlertID limits a fault on OpGetAlert to one alert.
	AlertID string `json:"alertId,omitempty"`
	// KeyID limits a fault on a management operation to calls whose Basic
	// credentials carry this key ID, so that one tenant's calls can fail
	// while another's succeed.
	KeyID string `json:"keyId,omitempty"`
}

// Sample non-JSON error bodies, as a gateway or CDN sends them.
const (
	// PlainText401 is a plain-text 401 body.
	PlainText401 = "Unauthorized\n"
	// HTML504 is a CDN's HTML 504 page.
	HTML504 = `<!DOCTYPE html>
<html><head><title>504 Gateway Time-out</title>
<style>body{font-family:sans-serif}</style></head>
<body><h1>504 Gateway Time-out</h1><p>The upstream server did not answer in time.</p>
<script>var trace="abc123";</script></body></html>
`
)

// SetFault sets a fault on op, replacing any earlier fault on op for the same
// AlertID and KeyID. A fault limited to an alert or a key takes precedence
// over one that is not.
func (s *Server) SetFault(op Operation, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.faults[op][:0:0]
	for _, old := range s.faults[op] {
		if old.AlertID != f.AlertID || old.KeyID != f.KeyID {
			list = append(list, old)
		}
	}
	s.faults[op] = append(list, &f)
}

// ClearFault removes the faults on op.
func (s *Server) ClearFault(op Operation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.faults, op)
}

// ClearFaults removes every fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = map[Operation][]*Fault{}
}

// takeFault returns the fault that applies to a call, counting it down: of
// the faults whose selectors match, the most specific one, the earliest set
// among equals.
func (s *Server) takeFault(op Operation, alertID, keyID string) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	idx, best := -1, -1
	for i, f := range s.faults[op] {
		if n, ok := f.matches(alertID, keyID); ok && n > best {
			idx, best = i, n
		}
	}
	if idx < 0 {
		return Fault{}, false
	}
	f := s.faults[op][idx]
	if f.Times > 0 {
		f.Times--
		if f.Times == 0 {
			s.faults[op] = append(s.faults[op][:idx:idx], s.faults[op][idx+1:]...)
		}
	}
	return *f, true
}

// matches reports whether a fault applies to a call for alertID made with
// keyID, and how many of its selectors it took to say so.
func (f *Fault) matches(alertID, keyID string) (specificity int, ok bool) {
	for _, sel := range [][2]string{{f.AlertID, alertID}, {f.KeyID, keyID}} {
		switch sel[0] {
		case "":
		case sel[1]:
			specificity++
		default:
			return 0, false
		}
	}
	return specificity, true
}

// applyFault delays or answers a call as f says. It reports whether the
// normal answer should still follow.
func (s *Server) applyFault(w http.ResponseWriter, r *http.Request, op Operation, f Fault) bool {
	if f.Latency > 0 && !s.sleep(r.Context(), f.Latency) {
		return false
	}
	if f.Hang {
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return false
	}
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	for name, value := range f.Headers {
		w.Header().Set(name, value)
	}
	if f.ContentType != "" {
		w.Header().Set("Content-Type", f.ContentType)
	}
	status := f.Status
	replaces := (status != 0 && (status < 200 || status > 299)) || f.Body != "" || f.Malformed || f.OversizedBytes > 0
	if !replaces {
		return true
	}
	if status == 0 {
		status = http.StatusOK
	}
	switch {
	case f.Malformed:
		writeJSON(w, status, []byte(`{"status":`+strconv.Itoa(status)+`,"requestId":"`+uuid.NewString()+`","result":[{"id":"`))
	case f.OversizedBytes > 0:
		writeOversized(w, op, status, f.OversizedBytes)
	case f.Body != "":
		writeJSON(w, status, []byte(f.Body))
	default:
		writeJSON(w, status, errorBody(op, status, http.StatusText(status)))
	}
	return false
}

// writeOversized streams a valid JSON answer padded to at least n bytes, in
// chunks, stopping if the client goes away.
func writeOversized(w http.ResponseWriter, op Operation, status int, n int64) {
	head := `{"status":` + strconv.Itoa(status) + `,"requestId":"` + uuid.NewString() + `","result":[],"padding":"`
	if isAlertAPI(op) {
		head = `{"data":{"id":"oversized"},"padding":"`
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	if _, err := w.Write([]byte(head)); err != nil {
		return
	}
	chunk := []byte(strings.Repeat("x", 32<<10))
	for left := n - int64(len(head)); left > 0; left -= int64(len(chunk)) {
		if _, err := w.Write(chunk[:min(int64(len(chunk)), left)]); err != nil {
			return
		}
	}
	_, _ = w.Write([]byte(`"}`))
}

// MarshalJSON writes Latency as a Go duration string.
func (f Fault) MarshalJSON() ([]byte, error) {
	type plain Fault // without methods, to avoid recursion
	out := struct {
		plain
		Latency string `json:"latency,omitempty"`
	}{plain: plain(f)}
	if f.Latency > 0 {
		out.Latency = f.Latency.String()
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads Latency as a Go duration string such as "250ms".
func (f *Fault) UnmarshalJSON(b []byte) error {
	type plain Fault
	in := struct {
		*plain
		Latency string `json:"latency,omitempty"`
	}{plain: (*plain)(f)}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	f.Latency = 0
	if in.Latency != "" {
		d, err := time.ParseDuration(in.Latency)
		if err != nil {
			return err
		}
		f.Latency = d
	}
	return nil
}
