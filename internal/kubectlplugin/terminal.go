package kubectlplugin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"
)

// What the plugin prints comes from the cloud (item names, states), from
// tenants (annotations, spec URLs, events anyone may create in their
// namespace) and from the API server (errors, warnings). A terminal takes
// some characters as commands: ESC and the C1 controls start sequences that
// move the cursor, erase rows, set the clipboard (OSC 52) or hide links
// (OSC 8); backspace, carriage return and newline rewrite or split a row.
// So every value the plugin prints goes through escapeTerminal, shown
// visibly, never acted on. kubectl's own printers.EscapeTerminal (cli-runtime)
// escapes ESC and CR only, which leaves BEL, backspace, DEL and the C1
// controls (U+009B is a whole CSI) through: hence this one.

// escapeTerminal is s with every character a terminal could act on written
// as a visible Go-style escape: the C0 controls (tab, newline and ESC
// included, so that a value stays in its cell and on its row), DEL, the C1
// controls U+0080–U+009F, the line and paragraph separators, the bidi
// controls (which reorder what a row shows) and bytes that are not UTF-8.
// Everything else is kept as it is.
func escapeTerminal(s string) string {
	if !needsEscape(s) {
		return s // the common case: no copy
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case escaped(r):
			b.WriteString(escapeOf(r))
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsEscape tells whether escapeTerminal would change s.
func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || escaped(r) {
			return true
		}
		i += size
	}
	return false
}

// escaped tells the runes escapeTerminal writes as escapes.
func escaped(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f: // C0, DEL, C1
		return true
	case r == '\u2028', r == '\u2029': // line and paragraph separators
		return true
	case r == '\u061c', r == '\u200e', r == '\u200f', // bidi marks
		r >= '\u202a' && r <= '\u202e', // embeddings and overrides
		r >= '\u2066' && r <= '\u2069': // isolates
		return true
	}
	return false
}

// escapeOf is the escape of r as Go writes it in a string literal.
func escapeOf(r rune) string {
	switch r {
	case '\t':
		return `\t`
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	}
	if r < 0x80 {
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// escapedArgs are the arguments of one of the plugin's own formats with
// every string among them (and every error and Stringer, as they print)
// escaped, so that the format's tabs and newlines lay out the output and
// the values' cannot.
func escapedArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case error:
			out[i] = escapeTerminal(v.Error())
		case fmt.Stringer:
			out[i] = escapeTerminal(v.String())
		default:
			if rv := reflect.ValueOf(a); rv.Kind() == reflect.String {
				out[i] = escapeTerminal(rv.String())
			} else {
				out[i] = a
			}
		}
	}
	return out
}

// linef appends one of the plugin's formats to b, its values escaped.
func linef(b *strings.Builder, format string, args ...any) {
	fmt.Fprintf(b, format, escapedArgs(args)...)
}

// escapedDocument is doc, as JSON would encode it, with every string in it
// (member names too) escaped, for -o yaml: the same escapes as in a table,
// and a document the YAML encoder accepts (it refuses control characters).
func escapedDocument(doc any) (any, error) {
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers as sent, not as float64
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return escapeStrings(v), nil
}

// escapeStrings escapes every string of v, a JSON value decoded into any.
func escapeStrings(v any) any {
	switch t := v.(type) {
	case string:
		return escapeTerminal(t)
	case []any:
		for i := range t {
			t[i] = escapeStrings(t[i])
		}
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[escapeTerminal(k)] = escapeStrings(e)
		}
		return out
	}
	return v
}

// escapeJSON escapes, in encoding/json's output b, what encoding/json
// leaves as it is and escapeTerminal would not: DEL, the C1 controls and
// the bidi controls, as \uXXXX (it escapes the C0 controls and U+2028 and
// U+2029 itself, and writes no byte that is not UTF-8). They can only be
// inside strings, so the JSON means the same, and the layout's own newlines
// are not touched.
func escapeJSON(b []byte) []byte {
	if !needsEscape(string(b)) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r >= 0x7f && escaped(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// escapingWriter escapes what is written through it, one line per write
// (the API server's warnings, written a line at a time by client-go): the
// line's own newline is kept, any other control character is escaped.
type escapingWriter struct{ w io.Writer }

func (e escapingWriter) Write(p []byte) (int, error) {
	line, newline := bytes.CutSuffix(p, []byte("\n"))
	out := escapeTerminal(string(line))
	if newline {
		out += "\n"
	}
	if _, err := io.WriteString(e.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// errorLines are the lines Main prints of err, each escaped: an error
// joined of others (errors.Join, as migrate's) one line per error, any
// other whole on one line, so that an API server's message cannot start a
// line of its own.
func errorLines(err error) []string {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var lines, msgs []string
		for _, e := range joined.Unwrap() {
			if e != nil {
				lines = append(lines, errorLines(e)...)
				msgs = append(msgs, e.Error())
			}
		}
		// Only a join's text is its errors' texts a line each; an error
		// that wraps several in a sentence of its own is shown whole.
		if strings.Join(msgs, "\n") == err.Error() {
			return lines
		}
	}
	return []string{escapeTerminal(err.Error())}
}
