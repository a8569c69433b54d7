package egress_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/servicewatch/servicewatch/internal/egress"
)

// A path-prefix entry holds against every trick a normalizing gateway in
// front of the API would resolve: the base URL cannot climb out of it.
func TestURLAllowListPathPrefixSurvivesNormalization(t *testing.T) {
	list, err := egress.ParseURLAllowList([]string{"https://gateway.example.com/cloud"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		url     string
		allowed bool
	}{
		{"https://gateway.example.com/cloud", true},
		{"https://gateway.example.com/cloud/v1/x", true},
		{"https://gateway.example.com/cloud//v1", true},
		{"https://gateway.example.com/cloud/a%20b", true},
		{"https://gateway.example.com/cloud/a.b/..c", true},
		{"https://gateway.example.com/cloud/..;/admin", false},        // Tomcat: "..;" is ".."
		{"https://gateway.example.com/cloud/..;x=1/admin", false},     // with a parameter
		{"https://gateway.example.com/cloud/.;/../admin", false},      // ".;" is "."
		{"https://gateway.example.com/cloud/%2e%2e/admin", false},     // decoded before resolving
		{"https://gateway.example.com/cloud/%2E%2E;/admin", false},    // both
		{"https://gateway.example.com/cloud/.%2e/admin", false},       // half encoded
		{"https://gateway.example.com/cloud/..%2fadmin", false},       // an encoded separator
		{"https://gateway.example.com/cloud/..%5cadmin", false},       // an encoded backslash
		{"https://gateway.example.com/cloud/..\\admin", false},        // a backslash
		{"https://gateway.example.com/cloud/..%3b/admin", false},      // an encoded ";"
		{"https://gateway.example.com/cloud/%252e%252e/admin", false}, // encoded twice
		{"https://gateway.example.com/cloud;x/v1", false},             // "cloud;x" plainly, "cloud" normalized
		{"https://gateway.example.com/cloud%2Fv1", false},             // one segment plainly, two normalized
		{"https://gateway.example.com/x/../cloud", false},             // inside only once resolved
		{"https://gateway.example.com/cloud/../../x", false},
	} {
		err := list.Allows(tt.url)
		if (err == nil) != tt.allowed {
			t.Errorf("Allows(%q) = %v, want allowed %v", tt.url, err, tt.allowed)
		}
	}
	err = list.Allows("https://gateway.example.com/cloud/..;/admin")
	if err == nil || !strings.Contains(err.Error(), "reads as /admin once normalized") {
		t.Errorf("the refusal does not say how the path reads: %v", err)
	}
}

// An entry's own path must mean one thing to every gateway.
func TestParseURLAllowListRejectsAmbiguousPrefixes(t *testing.T) {
	for _, bad := range []string{
		"https://gateway.example.com/cloud/..;/x", "https://gateway.example.com/cloud;v=1",
		"https://gateway.example.com/a%2Fb", "https://gateway.example.com/%2e%2e/x", "https://gateway.example.com/a\\b",
		"https://gateway.example.com/a%252e",
	} {
		if _, err := egress.ParseURLAllowList([]string{bad}); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
	if _, err := egress.ParseURLAllowList([]string{"https://gateway.example.com/a%20b/v.1/"}); err != nil {
		t.Errorf("a plain prefix was refused: %v", err)
	}
}

func TestNormalizePath(t *testing.T) {
	for _, tt := range []struct {
		path string
		want []string // nil: no single reading
	}{
		{"", []string{}},
		{"/", []string{}},
		{"/a/b/", []string{"a", "b"}},
		{"/a//b", []string{"a", "b"}},
		{"/a/./b/../c", []string{"a", "c"}},
		{"/a/..;/b", []string{"b"}},
		{"/a;p=1/b;q", []string{"a", "b"}},
		{"/a/%2E%2e/b", []string{"b"}},
		{"/a%2Fb%5Cc\\d", []string{"a", "b", "c", "d"}},
		{"/a%3Bx/b", []string{"a", "b"}},
		{"/a%20b", []string{"a b"}},
		{"/50%25", []string{"50%"}},
		{"/..", nil},
		{"/a/../../b", nil},
		{"/a%252e", nil},
		{"/a%zz", nil},
	} {
		got, err := egress.NormalizePath(tt.path)
		switch {
		case tt.want == nil && err == nil:
			t.Errorf("NormalizePath(%q) = %q, want an error", tt.path, got)
		case tt.want != nil && (err != nil || !slices.Equal(got, tt.want)):
			t.Errorf("NormalizePath(%q) = %q, %v, want %q", tt.path, got, err, tt.want)
		}
	}
}

// An ID placed in a path stays the one segment it names, or is refused.
func TestPathSegment(t *testing.T) {
	for _, tt := range []struct {
		id, want string // want "": refused
	}{
		{"65f1a2b3c4d5e6f708192a3b", "65f1a2b3c4d5e6f708192a3b"},
		{"a b", "a%20b"},
		{"a.b", "a.b"},
		{"...", "..."},
		{"50%", "50%25"},
		{"a?b#c", "a%3Fb%23c"},
		{".", ""},
		{"..", ""},
		{"../..", ""},
		{"..%2f..", ""},
		{"%2e%2e", ""},
		{"..;", ""},
		{"a;b", ""},
		{"a/b", ""},
		{`a\b`, ""},
		{"%252e", ""},
	} {
		got, err := egress.PathSegment(tt.id)
		if (err == nil) != (tt.want != "") || got != tt.want {
			t.Errorf("PathSegment(%q) = %q, %v, want %q", tt.id, got, err, tt.want)
		}
	}
}
