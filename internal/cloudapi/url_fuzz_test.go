package cloudapi

import (
	"testing"

	"github.com/servicewatch/servicewatch/internal/egress"
)

// Whatever ID a tenant writes, a request the client builds under an allowed
// base URL is allowed too, under the same path-prefix entry: read the way a
// normalizing gateway reads it, no ID leaves the place it is put in.
func FuzzBuiltURLsStayUnderTheAllowedPrefix(f *testing.F) {
	for _, seed := range []string{
		"65f1a2b3c4d5e6f708192a3b", "..", "../..", "..;", "..%2f..", "%2e%2e", `..\..`, "a/b", ".;", "x;/..", "%252e%252e", "a%2Fb",
		"....", ". .", "%", "%zz", "\x00", "..%00", "%3b", "…", "\u2024\u2024",
	} {
		f.Add(seed)
	}
	allowed, err := egress.ParseURLAllowList([]string{"https://gateway.example.com/cloud"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, id string) {
		for _, base := range []string{"https://gateway.example.com/cloud", "https://gateway.example.com/cloud/x/"} {
			u, err := buildURL(base, "api", "v2", "alerts", id)
			if err != nil {
				continue // refused: nothing is sent
			}
			if err := allowed.Allows(u.String()); err != nil {
				t.Errorf("ID %q: %s was built under an allowed base, but %v", id, u, err)
			}
			segs, err := egress.NormalizePath(u.EscapedPath())
			if err != nil || len(segs) == 0 || segs[len(segs)-1] != id || segs[len(segs)-2] != "alerts" {
				t.Errorf("ID %q: %s does not end in the one segment it names (%q, %v)", id, u, segs, err)
			}
		}
	})
}
