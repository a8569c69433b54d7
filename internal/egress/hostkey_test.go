package egress_test

import (
	"testing"

	"github.com/servicewatch/servicewatch/internal/egress"
)

func TestFromURLOneKeyPerHost(t *testing.T) {
	tests := []struct {
		url, want string
	}{
		{"https://api.example.com", "api.example.com"},
		{"https://API.example.com:443", "api.example.com"},
		{"https://api.example.com.:443/v1/", "api.example.com"},
		{"http://api.example.com:80", "api.example.com"},
		{"http://api.example.com:443", "api.example.com:443"},
		{"https://api.example.com:80", "api.example.com:80"},
		{"https://api.example.com:8443", "api.example.com:8443"},
		{"HTTPS://Api.Example.Com:443", "api.example.com"},
		{"https://user:pw@api.example.com/x", "api.example.com"},
		{"https://[::1]:443", "[::1]"},
		{"https://[::1]", "[::1]"},
		{"https://[2001:DB8::1]:8443", "[2001:db8::1]:8443"},
		{"http://127.0.0.1:8080", "127.0.0.1:8080"},
		{"not a url", "not a url"},
		{"/relative/path", "/relative/path"},
		{"https://[::1", "https://[::1"},
	}
	for _, tt := range tests {
		if got := egress.HostKeyFromURL(tt.url); got != tt.want {
			t.Errorf("FromURL(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
}

func TestOfMatchesFromURL(t *testing.T) {
	if a, b := egress.HostKey("https", "API.example.com:443"), egress.HostKeyFromURL("https://api.example.com"); a != b {
		t.Errorf("Of = %q, FromURL = %q: the same host", a, b)
	}
}

func TestPort(t *testing.T) {
	tests := []struct{ scheme, port, want string }{
		{"https", "", "443"},
		{"http", "", "80"},
		{"HTTP", "", "80"},
		{"https", "8443", "8443"},
		{"ftp", "", ""},
	}
	for _, tt := range tests {
		if got := egress.HostPort(tt.scheme, tt.port); got != tt.want {
			t.Errorf("Port(%q, %q) = %q, want %q", tt.scheme, tt.port, got, tt.want)
		}
	}
}

func TestName(t *testing.T) {
	for in, want := range map[string]string{"API.Example.com.": "api.example.com", "*.Example.com": "*.example.com", "::1": "::1"} {
		if got := egress.HostName(in); got != want {
			t.Errorf("Name(%q) = %q, want %q", in, got, want)
		}
	}
}
