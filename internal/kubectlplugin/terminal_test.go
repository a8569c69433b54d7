package kubectlplugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile are values a tenant's host, a tenant or an API server can put in
// what the plugin prints, each a command to the terminal if printed as is.
var hostile = map[string]string{
	"osc52 clipboard":  "name\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07",
	"csi erase rows":   "ok\x1b[2K\x1b[1A\x1b[2K",
	"osc8 hidden link": "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
	"c1 csi":           "x\u009b2Jy",
	"c1 osc":           "x\u009d52;c;aGk=\u009c",
	"del":              "a\x7fb",
	"backspace":        "Running\b\b\b\b\b\b\bFailed!",
	"carriage return":  "Failed\rRunning",
	"row split":        "a\tb\nc\vd\fe",
	"bidi override":    "abc\u202edcba",
	"line separator":   "a\u2028b",
	"not utf-8":        "a\x9b2Jb\xff",
}

// terminalControl tells whether s holds a character a terminal may act
// on, or a byte that is not UTF-8, and which.
func terminalControl(s string) (rune, bool) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return rune(s[i]), true
		}
		if escaped(r) {
			return r, true
		}
		i += size
	}
	return 0, false
}

func isUTF8(s string) bool { return utf8.ValidString(s) }

func TestEscapeTerminalLeavesNoControl(t *testing.T) {
	for name, v := range hostile {
		t.Run(name, func(t *testing.T) {
			got := escapeTerminal(v)
			if r, ok := terminalControl(got); ok {
				t.Errorf("escapeTerminal(%q) = %q still holds %U", v, got, r)
			}
			if escapeTerminal(got) != got {
				t.Errorf("escaping %q again changes it: %q", got, escapeTerminal(got))
			}
		})
	}
}

func TestEscapeTerminalShowsWhatItEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"events_kafka":             "events_kafka",
		"naïve 日本 ✓":               "naïve 日本 ✓",
		"a\x1b]52;c;aGk=\x07":      `a\x1b]52;c;aGk=\x07`,
		"x\u009b2J":                `x\u009b2J`,
		"a\x7fb":                   `a\x7fb`,
		"a\tb\nc\rd":               `a\tb\nc\rd`,
		"abc\u202edcba":            `abc\u202edcba`,
		"a\xffb":                   `a\xffb`,
		`C:\path\x1b is text only`: `C:\path\x1b is text only`,
	} {
		if got := escapeTerminal(in); got != want {
			t.Errorf("escapeTerminal(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEscapeJSONKeepsTheDocument(t *testing.T) {
	doc := map[string]string{}
	for name, v := range hostile {
		if isUTF8(v) {
			doc[name] = v
		}
	}
	b, _ := json.MarshalIndent(doc, "", "  ") // a map of strings: cannot fail
	got := escapeJSON(b)
	if r, ok := terminalControl(strings.ReplaceAll(string(got), "\n", "")); ok {
		t.Errorf("escapeJSON left %U in:\n%s", r, got)
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("escapeJSON made the JSON invalid: %v\n%s", err, got)
	}
	for k, v := range doc {
		if back[k] != v {
			t.Errorf("%s: decoded %q, want %q as sent", k, back[k], v)
		}
	}
}

func TestEscapedArgs(t *testing.T) {
	type status string
	got := fmt.Sprintf("%s|%s|%v|%d|%s", escapedArgs([]any{"a\x1b[2K", status("T\x07"), errors.New("e\u009b"), 3, stringer("s\x7f")})...)
	want := `a\x1b[2K|T\x07|e\u009b|3|s\x7f`
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

type stringer string

func (s stringer) String() string { return string(s) }

func TestErrorLines(t *testing.T) {
	joined := errors.Join(errors.New("first\x1b[2K"), errors.Join(errors.New("second"), errors.New("third\nforged line")))
	got := errorLines(joined)
	want := []string{`first\x1b[2K`, "second", `third\nforged line`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("errorLines(join) = %q, want %q", got, want)
	}
	wrapped := fmt.Errorf("both %w and %w", errors.New("a"), errors.New("b\x07"))
	if got := errorLines(wrapped); len(got) != 1 || got[0] != `both a and b\x07` {
		t.Errorf("errorLines(%%w twice) = %q, want it whole", got)
	}
}

func TestEscapingWriterKeepsOneLine(t *testing.T) {
	var b strings.Builder
	if _, err := fmt.Fprintf(escapingWriter{&b}, "Warning: %s\n", "policy\x1b]52;c;aGk=\x07\nWarning: forged"); err != nil {
		t.Fatal(err)
	}
	if want := "Warning: policy\\x1b]52;c;aGk=\\x07\\nWarning: forged\n"; b.String() != want {
		t.Errorf("wrote %q, want %q", b.String(), want)
	}
}
