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
			// The management host's alert of a service: every ID one segment.
			managed, err := buildURL(base, "v1", "organizations", id, "services", id, "observability", "alerts", id)
			if err != nil {
				t.Errorf("ID %q: the alert API's URL was built, the management API's was not: %v", id, err)
				continue
			}
			if err := allowed.Allows(managed.String()); err != nil {
				t.Errorf("ID %q: %s was built under an allowed base, but %v", id, managed, err)
			}
			segs, err = egress.NormalizePath(managed.EscapedPath())
			if n := len(segs); err != nil || n < 7 || segs[n-6] != id || segs[n-4] != id || segs[n-1] != id || segs[n-7] != "organizations" {
				t.Errorf("ID %q: %s does not hold the three segments it names (%q, %v)", id, managed, segs, err)
			}
		}
	})
}
