package egress_test

import (
	"strings"
	"testing"

	"github.com/servicewatch/servicewatch/internal/egress"
)

func TestURLAllowList(t *testing.T) {
	list, err := egress.ParseURLAllowList([]string{
		"https://api.example.com",
		"https://gateway.example.com/cloud/",
		"alerts.example.com",
		"metrics.example.com:8443",
		"*.tenants.example.com",
		"http://10.0.0.5:8080",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		url     string
		allowed bool
	}{
		{"https://api.example.com", true},
		{"https://API.example.com./", true},
		{"https://api.example.com:443/v2", true},
		{"http://api.example.com", false},               // a URL entry fixes the scheme
		{"https://api.example.com:8443", false},         // and the port
		{"https://api.example.com.evil.test", false},    // and the whole host
		{"https://evil.test/api.example.com", false},    // the host, not the text
		{"https://api.example.com@evil.test", false},    // user info is not the host
		{"https://gateway.example.com/cloud", true},     // the prefix itself
		{"https://gateway.example.com/cloud/v1/", true}, // and under it
		{"https://gateway.example.com/cloudy", false},   // segment by segment
		{"https://gateway.example.com/", false},         // not above it
		{"https://gateway.example.com/cloud/../admin", false},
		{"https://gateway.example.com/cloud/%2e%2e/admin", false},
		{"https://gateway.example.com/cloud%2F..%2Fadmin", false},
		{"https://alerts.example.com", true},       // a host entry: any scheme,
		{"http://alerts.example.com:9000/x", true}, // any port, any path
		{"https://alerts.example.com.", true},
		{"https://sub.alerts.example.com", false},
		{"https://metrics.example.com:8443", true},
		{"https://metrics.example.com", false},
		{"https://a.tenants.example.com", true},
		{"http://a.b.tenants.example.com:81", true},
		{"https://tenants.example.com", false}, // "*." is subdomains only
		{"https://xtenants.example.com", false},
		{"http://10.0.0.5:8080/api", true},
		{"http://10.0.0.5", false},
		{"http://169.254.169.254/latest/meta-data", false},
		{"http://127.0.0.1:8080", false},
		{"api.example.com", false}, // not a URL
		{"", false},
	} {
		err := list.Allows(tt.url)
		if (err == nil) != tt.allowed {
			t.Errorf("Allows(%q) = %v, want allowed %v", tt.url, err, tt.allowed)
		}
		if err != nil && tt.url != "" && strings.Contains(tt.url, "://") && !strings.Contains(err.Error(), "https://api.example.com,https://gateway.example.com/cloud/") {
			t.Errorf("Allows(%q): %q does not say what is allowed", tt.url, err)
		}
	}
}

func TestURLAllowListEmptyAllowsAll(t *testing.T) {
	var zero egress.URLAllowList
	parsed, err := egress.ParseURLAllowList(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []egress.URLAllowList{zero, parsed} {
		if err := l.Allows("http://127.0.0.1:8080"); err != nil || !l.IsEmpty() {
			t.Errorf("an empty list refused: %v", err)
		}
	}
}

func TestParseURLAllowListRejectsBadEntries(t *testing.T) {
	for _, bad := range []string{
		"", "ftp://api.example.com", "https://", "https://user:pw@api.example.com", "https://api.example.com/?q=1",
		"https://api.example.com/#x", "api.example.com/path", "api.*.example.com", "*.", "https://api.example.com/a/../b",
	} {
		if _, err := egress.ParseURLAllowList([]string{bad}); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}
