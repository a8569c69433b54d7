package cloudapi

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/servicewatch/servicewatch/internal/bound"
)

// Bounds of an item's otherFields (see swv1.Pipe.OtherFields, which
// documents them to users, and its CRD markers).
const (
	maxOtherFields     = 16
	maxOtherFieldBytes = 256
)

// otherFields collects what an item holds that has no typed field, flattened
// to "path: value" entries, within the bounds above.
type otherFields struct {
	list []string
	more bool // entries were left out for want of room
}

// entries returns the collected entries, nil when there are none, with a
// last entry saying so when some were left out.
func (o *otherFields) entries() []string {
	if o.more {
		return append(o.list, "… more fields not shown")
	}
	return o.list
}

// put adds one entry whose value is already rendered.
func (o *otherFields) put(path, value string) {
	if len(o.list) >= maxOtherFields {
		o.more = true
		return
	}
	o.list = append(o.list, bound.Cut(path+": "+value, maxOtherFieldBytes))
}

// add flattens the JSON value raw found at path into entries. A member named
// like a credential is one "<redacted>" entry, never descended into; null
// adds nothing.
func (o *otherFields) add(path string, raw []byte) {
	if len(o.list) >= maxOtherFields {
		o.more = true
		return
	}
	if isCredentialName(lastSegment(path)) {
		if firstByte(raw) != 'n' {
			o.put(path, quoteValue(redacted))
		}
		return
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	_ = o.walk(dec, path)
}

// fullError stops a walk once no entry fits any more.
type fullError struct{}

func (fullError) Error() string { return "otherFields full" }

// walk flattens the next value of dec, token by token, so that a large value
// costs no more memory than its tokens, and stops once no entry fits.
func (o *otherFields) walk(dec *json.Decoder, path string) error {
	if len(o.list) >= maxOtherFields {
		o.more = true
		return fullError{}
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return o.walkObject(dec, path)
		}
		return o.walkArray(dec, path)
	case string:
		o.put(path, quoteValue(sanitizeString(t)))
	case json.Number:
		o.put(path, t.String())
	case bool:
		o.put(path, strconv.FormatBool(t))
	}
	return nil // null: left out
}

func (o *otherFields) walkObject(dec *json.Decoder, path string) error {
	empty := true
	for dec.More() {
		empty = false
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		p := joinPath(path, name)
		if isCredentialName(name) {
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return err
			}
			if firstByte(v) != 'n' {
				o.put(p, quoteValue(redacted))
			}
			continue
		}
		if err := o.walk(dec, p); err != nil {
			return err
		}
	}
	if empty {
		o.put(path, "{}")
	}
	_, err := dec.Token()
	return err
}

func (o *otherFields) walkArray(dec *json.Decoder, path string) error {
	i := 0
	for ; dec.More(); i++ {
		if err := o.walk(dec, path+"["+strconv.Itoa(i)+"]"); err != nil {
			return err
		}
	}
	if i == 0 {
		o.put(path, "[]")
	}
	_, err := dec.Token()
	return err
}

// quoteValue renders a string as JSON (quoted, control characters escaped,
// but <, > and & as they are: the entry is read by people, not by browsers).
func quoteValue(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return strconv.Quote(s)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func lastSegment(path string) string {
	path = strings.TrimRight(path, "]0123456789[")
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// credentialWords are parts of member names that hold credentials in what
// the services send or accept: password, the secret of an access key, a
// private key, a connection string, a service account key or file, a whole
// credentials object, tokens and API keys. Names are compared in lower case
// without '_' and '-', so that secret_key and secretKey match alike.
var credentialWords = []string{
	"password", "passwd", "secret", "token", "privatekey", "credential",
	"connectionstring", "serviceaccountkey", "serviceaccountfile", "accesskey", "apikey",
}

// isCredentialName reports whether a member named name holds a credential.
func isCredentialName(name string) bool {
	var buf [64]byte
	n := buf[:0]
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '-':
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		n = append(n, c)
	}
	for _, w := range credentialWords {
		if bytes.Contains(n, []byte(w)) {
			return true
		}
	}
	return false
}

// secretMarkers are what a string value holding a credential contains,
// whatever its member is named: a private key in PEM form, or the key=value
// pairs of a connection string that carry a key or password.
var secretMarkers = []string{
	"private key-----", "accountkey=", "sharedaccesskey=", "sharedaccesssignature=", "password=", "pwd=",
}

// sanitizeString makes a string from the cloud safe to show: a value that
// holds a private key or a connection string's secret reads "<redacted>",
// and URLs lose their user info and query.
func sanitizeString(s string) string {
	lower := strings.ToLower(s)
	for _, m := range secretMarkers {
		if strings.Contains(lower, m) {
			return redacted
		}
	}
	if !strings.Contains(s, "://") {
		return s
	}
	return stripURLSecrets(s)
}

// stripURLSecrets removes the user info (user:password@) and the query
// (?…, which may hold signatures and tokens) of every URL in s.
func stripURLSecrets(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+3])
		rest := s[i+3:]
		end := urlEnd(rest)
		u := rest[:end]
		authEnd := strings.IndexAny(u, "/?#")
		if authEnd < 0 {
			authEnd = len(u)
		}
		if at := strings.LastIndexByte(u[:authEnd], '@'); at >= 0 {
			u = u[at+1:]
		}
		if q := strings.IndexByte(u, '?'); q >= 0 {
			frag := ""
			if h := strings.IndexByte(u[q:], '#'); h >= 0 {
				frag = u[q+h:]
			}
			u = u[:q] + frag
		}
		b.WriteString(u)
		s = rest[end:]
	}
}

// urlEnd is where the URL at the start of s ends: at white space, or at a
// quote or bracket that may enclose it.
func urlEnd(s string) int {
	if i := strings.IndexAny(s, " \t\r\n\"'<>"); i >= 0 {
		return i
	}
	return len(s)
}

// mongoHostAndDatabase reads the hosts and the database of a MongoDB
// connection URI (mongodb://user:password@h1,h2/db?options), leaving out its
// user info, password and options.
func mongoHostAndDatabase(uri string) (host, database string) {
	rest := uri
	if _, after, ok := strings.Cut(uri, "://"); ok {
		rest = after
	}
	rest, _, _ = strings.Cut(rest, "?")
	rest, _, _ = strings.Cut(rest, "#")
	authority, path, _ := strings.Cut(rest, "/")
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		authority = authority[at+1:]
	}
	return sanitizeString(authority), sanitizeString(path)
}
