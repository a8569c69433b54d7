// Package cloudapi is the only code in servicewatch that speaks HTTP to the
// cloud. It knows nothing of Kubernetes: it takes base URLs, credentials and
// identifiers, and returns the cloud's items as api/v1beta1 values, or an
// *Error whose Reason the controller maps to a condition.
//
// It holds the HTTP client, its errors and their classification, the three
// operations and their types. What a caller reads is in operations.go: the
// operations, what they take (options, credentials, an alert source) and
// return (a list, an alert, a page), and the *Error they fail with; client.go
// makes the HTTP call, errors.go reads a failed response into a Reason, and
// list.go, alert.go and alertpage.go decode the answers. The rest of what a call needs is a sibling
// package's single job, which this one imports and which never imports it:
//
//   - internal/egress: where credentials may go (the URL allow-list the
//     controller checks, the dial-time guard of Options.DenyLocalAddresses);
//   - internal/cloudapi/redact: keeping credentials out of messages and items;
//   - internal/ratebudget: the client-side rate budgets, whose holds after a
//     429 the client honors and records (Options.Budgets);
//   - internal/cloudapi/lenient: reading the cloud's items into the api/v1beta1
//     types, keeping what it can of an odd one;
//   - internal/egress (HostKey): when two URLs name one host;
//   - internal/bound: cutting strings to a size.
//
// # Operations
//
// Three read operations are supported, as described in the cloud API spec:
//
//   - [Client.ListPipes]: GET {base}/v1/organizations/{org}/services/{svc}/pipes
//     (management API, HTTP Basic with key ID and key secret);
//   - [Client.ListReversePrivateEndpoints]: GET
//     {base}/v1/organizations/{org}/services/{svc}/pipesReversePrivateEndpoints
//     (management API);
//   - [Client.GetAlert]: GET {alertsBase}/api/v2/alerts/{id} (alert API, Bearer
//     token, body {"data": {...}}).
//
// and the alert routes the services serve today (cloud-apis-today.md), from
// either host an [AlertSource] names:
//
//   - [Client.GetAlertFrom]: one alert, from the alert API as GetAlert reads
//     it, or from the management API of a service, GET
//     {base}/v1/organizations/{org}/services/{svc}/observability/alerts/{id}
//     (the organization key, the management envelope and budget);
//   - [Client.ListAlerts]: a page of the alerts, GET {alertsBase}/api/v2/alerts
//     or .../observability/alerts, ?limit=&offset=; a host without the list
//     route answers [ErrNoListRoute], and internal/alerts reads the pages
//     whole.
//
// Base URLs may carry a path prefix and may or may not end in a slash.
// Identifiers are escaped as single path segments, so an ID can never change
// which endpoint is called, even behind a gateway that normalizes paths: an
// ID it could read as a dot segment or as more than one segment ("..",
// "../..", "..;", "a/b", "%2e%2e") is refused as a ConfigurationError before
// anything is sent (egress.PathSegment).
//
// # Retries
//
// The client NEVER retries. One call is at most one HTTP request. Retrying is
// the reconciler's job: its schedule (exponential backoff capped at the
// watch's interval, or the service's Retry-After on a 429) already decides
// when to try again, and retrying here as well would multiply the load a
// fleet of watches puts on the cloud and hide failures from the conditions.
//
// # Bounds
//
// Every call has a timeout (Options.Timeout) that covers the HTTP exchange
// including reading the body, and a cap on the response size
// (Options.MaxResponseBytes for lists, Options.MaxAlertResponseBytes for an
// alert). All calls share one http.Transport with
// keep-alive and the environment's proxy settings. Redirects are not
// followed: a 3xx is reported as UnexpectedStatus, so that credentials are
// never replayed to another location, with where it points (Error.Location:
// scheme, host and path) so that the user can fix the URL.
//
// # Rate limiting
//
// Calls never wait. Rate limiting is admission, asked of the budgets
// (internal/ratebudget, built by [NewBudgets]) before a sync, by the caller.
// When the service answers 429, the client holds that budget for as long as
// the service asked (Error.RetryAfter, Error.RetryAt). Until then every call
// of that budget fails at once with ReasonRateLimited and the remaining wait,
// nothing is sent over the wire, and the budgets' Admit says the wait too.
// The client and the caller share one store of budgets, so that both see
// the hold. A 503's Retry-After is reported the same way but holds no
// budget: it speaks of what answered that call, not of the credential, and
// the caller waits it out for that call alone.
//
// # Errors
//
// Every error returned by the client is an *Error. The HTTP status code
// decides its Reason; the response body adds the service's own words
// (Message) and request ID, and names three cases apart: a 424 saying the
// service is idle is ReasonServiceIdle, one naming another state of the
// service (its structured code and serviceState, or "Current state: ..." in
// its words) is ReasonServiceNotRunning with Error.ServiceState, and a 404
// whose body is not the API's JSON (an HTML page such as "Cannot GET /v1/...",
// plain text) is ReasonEndpointNotFound: the URL reaches no such route. A
// 400 is ReasonBadRequest. The words are those of whatever answered, the
// service or a proxy in front of it: a JSON error or message, an HTML page's
// title or, without one, its visible text, a WWW-Authenticate challenge's
// error_description, and, for a 200 whose envelope's status disagrees, the
// envelope's error. Messages are short, stripped of HTML and of control,
// format and bidi characters, with long URLs shortened, and scrubbed of the
// credentials used for the call in any encoding a service may echo them in
// (JSON and Go escapes, URL encoding, base64), whole encodings only: the
// error body is scrubbed past its cap before it is cut, and the beginning of
// a credential at a text's end shows like any text, so that no redaction
// tells whether a text begins the credential. Scrubbing a response takes at
// most Options.MaxScrubWork steps and stops with the call's context; past
// either, its text is not shown. The text of Error.Err is cleaned the same
// way.
//
// # Decoding
//
// Items are decoded straight into the api/v1beta1 types, the one schema of
// the cloud's data, whose field documentation kubectl explain shows. Each
// item of a list is read on its own, member by member (internal/cloudapi/lenient),
// so that no list is lost to one odd item: absent fields and nulls stay nil,
// enumerations are plain strings, decimals are swv1.Decimal in the form the
// API server stores them, numbers are also read from numeric strings and
// scaling from Kubernetes quantities. A value that cannot be used is left out
// of its field, kept as sent in the item's otherFields and counted in
// List.Incomplete; members the types do not have are kept in otherFields, in
// a bounded form. Credentials are redacted as soon as an item is read,
// before anything outside the client sees it: a pipe's objectStorage
// connectionString, any member named like a credential, private keys, and
// the user info and query of URLs; and every string of a list item, its
// otherFields and the paths List.IncompleteItems names included, is
// scrubbed of the call's own credential in any encoding the scrubber knows
// (a service that echoes the Authorization header in an answer gets
// "<redacted>" into status, not the key). An alert is read by the same reader,
// so that such a value leaves out that member only (AlertResult.LeftOut
// names it), and reads both shapes of the alert API (see swv1.AlertStatus).
//
// A list response is decoded as it streams in, one item at a time, and what
// is kept (slim.Keeper) is bounded by ListOptions.KeepBytes: the longest prefix of the
// items, ordered by id after those that need attention, that fits (cut to
// their identities if need be). Duplicated ids are kept once, the
// occurrence whose encoding sorts first winning, so that the order of a
// response never changes what is kept. List.Total and ListOptions.Each still
// cover every distinct item. A call's memory thus follows KeepBytes plus 8
// to 16 bytes per distinct id, not the size of the response, which
// Options.MaxResponseBytes caps all the same. Its CPU is bounded too: the
// decoding and scrubbing are counted in units of work (lenient.Work)
// against Options.MaxDecodeWork, which no real answer reaches (see
// DefaultDecodeWorkPerByte); an answer that does fails the call with
// ReasonDecodeBudgetExceeded, and ListOptions.Work tells the caller what
// each answer cost, to charge to whoever asked (internal/tenancy).
package cloudapi
