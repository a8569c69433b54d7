package egress

import (
	"errors"
	"net/netip"
	"testing"
)

// The dial guard refuses what the manager's position lets it reach and its
// tenants cannot, in every spelling an address can take, and lets anything
// else through.
func TestLocalKind(t *testing.T) {
	for _, tt := range []struct {
		addr, want string
	}{
		{"127.0.0.1", "loopback"},
		{"127.1.2.3", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"::127.0.0.1", "loopback"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "unspecified"},
		{"::", "unspecified"},
		{"::ffff:0.0.0.0", "unspecified"},
		{"169.254.169.254", "link-local"},
		{"169.254.0.1", "link-local"},
		{"::ffff:169.254.169.254", "link-local"},
		{"64:ff9b::a9fe:a9fe", "link-local"},
		{"::a9fe:a9fe", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::a9fe:a9fe%eth0", "link-local"},
		{"ff02::1", "link-local"},
		{"224.0.0.251", "link-local"},
		{"fd00:ec2::254", "cloud metadata"},
		{"fd00:ec2::23", "cloud metadata"},
		{"fd20:ce::254", "cloud metadata"},
		{"168.63.129.16", "cloud metadata"},
		{"169.254.170.23", "link-local"},
		{"fd00:ec2::22", ""},
		{"100.100.100.200", "cloud metadata"},
		{"10.0.0.1", ""},
		{"192.168.1.10", ""},
		{"172.16.0.1", ""},
		{"100.64.0.1", ""},
		{"8.8.8.8", ""},
		{"2001:db8::1", ""},
		{"fd00::1", ""},
		{"64:ff9b::808:808", ""},
	} {
		if got := localKind(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("localKind(%s) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}

// The hook sees the address the dialer is about to connect to, "ip:port".
func TestRefuseLocalAddress(t *testing.T) {
	for _, tt := range []struct {
		address string
		refused bool
	}{
		{"127.0.0.1:443", true},
		{"[::1]:8080", true},
		{"169.254.169.254:80", true},
		{"[fe80::1%eth0]:443", true},
		{"[::ffff:169.254.169.254]:80", true},
		{"0.0.0.0:443", true},
		{"not-an-address", true},
		{"api.example.com:443", true}, // a name, not an address: never expected, refused
		{"10.96.0.10:443", false},
		{"[2001:db8::1]:443", false},
		{"93.184.216.34:443", false},
	} {
		err := RefuseLocalAddress("tcp", tt.address, nil)
		if refused := errors.As(err, new(*AddressNotAllowedError)); refused != tt.refused {
			t.Errorf("%s: refused %v (%v), want %v", tt.address, refused, err, tt.refused)
		}
	}
}
