package fakecloud

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
)

// AdminPrefix is where AdminHandler expects to be mounted.
const AdminPrefix = "/_fakecloud/"

// maxAdminBody bounds the body of an admin request.
const maxAdminBody = 64 << 20

// AdminHandler returns an HTTP handler that lets a test or a demo drive a fake
// running as a separate program. Mount it at AdminPrefix; it is not
// authenticated, so serve it on loopback only.
//
//	GET    /_fakecloud/calls          {"counts": {op: n}, "log": [Call...]}
//	DELETE /_fakecloud/calls          forget the calls
//	PUT    /_fakecloud/faults/{op}    body: a Fault as JSON ("latency": "250ms"), up to 64 MiB
//	DELETE /_fakecloud/faults         clear every fault
//	PUT    /_fakecloud/data           body: Data as YAML or JSON
func (s *Server) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+AdminPrefix+"calls", func(w http.ResponseWriter, _ *http.Request) {
		counts := map[Operation]int{}
		for _, op := range []Operation{OpListPipes, OpListReversePrivateEndpoints, OpGetAlert} {
			counts[op] = s.Calls(op)
		}
		writeAdmin(w, http.StatusOK, map[string]any{"counts": counts, "log": s.CallLog()})
	})
	mux.HandleFunc("DELETE "+AdminPrefix+"calls", func(w http.ResponseWriter, _ *http.Request) {
		s.ResetCalls()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("PUT "+AdminPrefix+"faults/{op}", func(w http.ResponseWriter, r *http.Request) {
		op := Operation(r.PathValue("op"))
		if !slices.Contains(Operations(), op) {
			writeAdmin(w, http.StatusNotFound, map[string]string{"error": "unknown operation"})
			return
		}
		var f Fault
		// A fault's Body may be a large answer, such as a list of millions
		// of items for a memory benchmark.
		if err := json.NewDecoder(io.LimitReader(r.Body, maxAdminBody)).Decode(&f); err != nil {
			writeAdmin(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		s.SetFault(op, f)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("DELETE "+AdminPrefix+"faults", func(w http.ResponseWriter, _ *http.Request) {
		s.ClearFaults()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("PUT "+AdminPrefix+"data", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(io.LimitReader(r.Body, maxAdminBody))
		if err == nil {
			var d Data
			if d, err = ParseData(b); err == nil {
				s.SetData(d)
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		writeAdmin(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
	})
	return mux
}

func writeAdmin(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"marshal"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
