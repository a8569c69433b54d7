package fakecloud

import (
	"encoding/json"
	"html"

	"github.com/google/uuid"
)

// Faults that answer as the services do today when something other than the
// call is wrong, for tests and demos of how the operator names them. Set
// them with SetFault on the operation that should answer so.

// ServiceNotRunningFault answers 424 the way the management API does for a
// service in state (stopped, say), in its older form: the state only in the
// words, {"error":"FAILED_DEPENDENCY: ... Current state: stopped",...}.
func ServiceNotRunningFault(state string) Fault {
	return Fault{Status: 424, Body: mustJSON(map[string]any{
		"error":     "FAILED_DEPENDENCY: Service is not running. Current state: " + state,
		"status":    424,
		"requestId": uuid.NewString(),
	})}
}

// ServiceAwakingFault answers 424 with the structured body of a service that
// is waking up: code SERVICE_NOT_RUNNING, serviceState awaking.
func ServiceAwakingFault() Fault {
	return Fault{Status: 424, Body: mustJSON(map[string]any{
		"error":        "FAILED_DEPENDENCY: Service is waking up; try again shortly",
		"code":         "SERVICE_NOT_RUNNING",
		"serviceState": "awaking",
		"canWake":      false,
		"status":       424,
		"requestId":    uuid.NewString(),
	})}
}

// ServiceIdleFault answers 424 with the structured body of an idle service:
// code SERVICE_IDLE, serviceState idle.
func ServiceIdleFault() Fault {
	return Fault{Status: 424, Body: mustJSON(map[string]any{
		"error":        "FAILED_DEPENDENCY: Service is idle",
		"code":         "SERVICE_IDLE",
		"serviceState": "idle",
		"canWake":      true,
		"status":       424,
		"requestId":    uuid.NewString(),
	})}
}

// RouteNotFoundFault answers 404 with the HTML page a web framework sends
// for a route it does not have ("Cannot GET path"), as the cloud's servers
// do when the base URL or its path prefix is wrong.
func RouteNotFoundFault(path string) Fault {
	return Fault{Status: 404, ContentType: "text/html; charset=utf-8", Body: `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Error</title>
</head>
<body>
<pre>Cannot GET ` + html.EscapeString(path) + `</pre>
</body>
</html>
`}
}

// InvalidObjectIDFault answers 400 the way the alert API does for an alert
// ID that is not an ObjectId.
func InvalidObjectIDFault() Fault {
	return Fault{Status: 400, Body: `{"message":"Params validation failed: id: Invalid ObjectId"}`}
}

// AlertNotFoundTextFault answers 404 the way the alert API answers for an
// alert it does not have: the bare status text, in plain text.
func AlertNotFoundTextFault() Fault {
	return Fault{Status: 404, ContentType: "text/plain; charset=utf-8", Body: "Not Found"}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // strings, numbers and booleans only
	}
	return string(b)
}
