package redact

// Placeholder replaces whatever is redacted: a credential in a message, a
// member named like one, a value that holds one.
const Placeholder = "<redacted>"

// Secret keeps a secret where fmt's reflection cannot reach it. fmt prints a
// struct's unexported fields by reflection, without calling their Format
// method, and it prints a func as an address; so does every dumper that
// follows pointers. The zero value holds "".
type Secret func() string

// Hide returns s as a Secret.
func Hide(s string) Secret { return func() string { return s } }

// Reveal returns the secret, "" for the zero value.
func (h Secret) Reveal() string {
	if h == nil {
		return ""
	}
	return h()
}
