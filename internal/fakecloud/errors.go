package fakecloud

import (
	"encoding/json"
	"html"
	"net/http"
	"strings"

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

// RedirectFault answers status (301, 302, 307 or 308) with a Location, the
// way Express's res.redirect does: its words ("Moved Permanently.
// Redirecting to ...") in plain text, as a service that moved would.
func RedirectFault(status int, location string) Fault {
	return Fault{Status: status, ContentType: "text/plain; charset=utf-8", Headers: map[string]string{"Location": location},
		Body: http.StatusText(status) + ". Redirecting to " + location}
}

// UnavailableFault answers 503 with the management API's error body and
// Retry-After as given: seconds ("120") or an HTTP date.
func UnavailableFault(retryAfter string) Fault {
	return Fault{Status: http.StatusServiceUnavailable, RetryAfter: retryAfter, Body: mustJSON(map[string]any{
		"error":     "SERVICE_UNAVAILABLE: scheduled maintenance",
		"status":    http.StatusServiceUnavailable,
		"requestId": uuid.NewString(),
	})}
}

// UntitledPageFault answers status with an HTML page that has no title nor
// heading, only text, as a proxy in front of a service sends when its
// upstream fails (an ingress's or a mesh sidecar's page).
func UntitledPageFault(status int) Fault {
	return Fault{Status: status, ContentType: "text/html", Body: UntitledPage}
}

// UntitledPage is the page UntitledPageFault serves.
const UntitledPage = `<html><body><p>upstream connect error or disconnect/reset before headers. reset reason: connection failure</p>
<script>var trace="abc123";</script></body></html>
`

// AuthChallengeFault answers 401 with a WWW-Authenticate challenge whose
// error_description says why, as a gateway or identity provider does, and
// the API's own error body.
func AuthChallengeFault(description string) Fault {
	return Fault{Status: http.StatusUnauthorized, Headers: map[string]string{
		"WWW-Authenticate": `Bearer realm="api", error="invalid_token", error_description="` + quoted(description) + `"`}}
}

// quoted escapes text for a quoted string of an HTTP header.
func quoted(text string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(text)
}

// EnvelopeDisagreesFault answers HTTP 200 with a management envelope whose
// own status is status and whose error is words, as a gateway that wraps
// every answer in a 200 does.
func EnvelopeDisagreesFault(status int, words string) Fault {
	return Fault{Status: http.StatusOK, Body: mustJSON(map[string]any{
		"status":    status,
		"requestId": uuid.NewString(),
		"error":     words,
	})}
}

// NullResultFault answers a list with "result": null, as the management API
// does for a service that has none: the vendor's clients read it as an empty
// list.
func NullResultFault() Fault {
	return Fault{Status: http.StatusOK, Body: mustJSON(map[string]any{
		"status":    http.StatusOK,
		"requestId": uuid.NewString(),
		"result":    nil,
	})}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // strings, numbers and booleans only
	}
	return string(b)
}
