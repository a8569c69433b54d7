// Package redact keeps credentials out of everything the operator shows:
// error messages, conditions, events, logs and the cloud's items in status.
//
// It has one job with three entry points. A [Scrubber] finds the credentials
// a call was made with in the text a service sends back, in any encoding a
// service may echo them in (JSON and Go escapes, URL encoding, HTML entities,
// base64), in time linear in the text and within a work bound, and
// [Scrubber.Clean] makes such text fit to show. Only whole encodings are
// redacted, so that a redaction never tells whether a text begins a secret.
// [IsCredentialName], [Value] and [Name] redact the cloud's own data by its
// shape: a member named like a credential, a private key, a connection
// string's or a JAAS config's secret, an Authorization header's value, the
// user info and query of a URL or DSN (a connection string keeps its
// options that carry no secret), a member name that is a token. [Secret]
// keeps a secret away from fmt's reflection, and [Placeholder] is what every
// redaction leaves.
//
// It is separate so that the rules that keep secrets secret are reviewed,
// fuzzed and changed in one place, whoever calls them: it knows no HTTP
// client, no Kubernetes type and no API schema, only strings.
package redact
