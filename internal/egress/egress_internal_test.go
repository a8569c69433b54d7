package egress

import (
	"errors"
	"net"
	"net/netip"
	"strings"
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
		{"169.254.169.254", "cloud metadata"},
		{"169.254.0.1", "link-local"},
		{"169.254.20.10", "link-local"}, // node-local DNS: no credential, but no API either
		{"::ffff:169.254.169.254", "cloud metadata"},
		{"64:ff9b::a9fe:a9fe", "cloud metadata"},
		{"::a9fe:a9fe", "cloud metadata"},
		{"fe80::1", "link-local"},
		{"fe80::a9fe:a9fe%eth0", "link-local"},
		{"ff02::1", "link-local"},
		{"224.0.0.251", "link-local"},
		{"fd00:ec2::254", "cloud metadata"},
		{"fd00:ec2::23", "cloud metadata"},
		{"fd20:ce::254", "cloud metadata"},
		{"168.63.129.16", "cloud metadata"},
		{"169.254.170.23", "cloud metadata"},
		{"169.254.170.2", "cloud metadata"},
		{"169.254.0.23", "cloud metadata"},
		{"192.0.0.192", "cloud metadata"},
		{"::ffff:192.0.0.192", "cloud metadata"},
		{"64:ff9b::6464:64c8", "cloud metadata"}, // 100.100.100.200 through NAT64
		{"192.0.0.193", ""},
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
		got := localKind(netip.MustParseAddr(tt.addr))
		if tt.want == "cloud metadata" && strings.HasPrefix(got, "cloud metadata (") {
			continue
		}
		if got != tt.want {
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

// Every node-local credential and metadata service the brief of issue 27
// names is refused, and says whose it is.
func TestMetadataAddressesOfTheMajorClouds(t *testing.T) {
	for addr, provider := range map[string]string{
		"169.254.169.254": "AWS", "fd00:ec2::254": "AWS", "169.254.170.2": "ECS", "169.254.170.23": "EKS Pod Identity",
		"fd00:ec2::23": "EKS Pod Identity", "fd20:ce::254": "Google Cloud", "168.63.129.16": "Azure WireServer",
		"100.100.100.200": "Alibaba", "192.0.0.192": "Oracle", "169.254.0.23": "Tencent",
	} {
		err := RefuseLocalAddress("tcp", net.JoinHostPort(addr, "80"), nil)
		if err == nil || !strings.Contains(err.Error(), provider) {
			t.Errorf("%s: %v, want a refusal naming %s", addr, err, provider)
		}
	}
}
