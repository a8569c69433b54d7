package egress_test

import (
	"errors"
	"testing"

	"github.com/servicewatch/servicewatch/internal/egress"
)

// The exception lets through only what it names, and never a cloud
// metadata address, whatever prefix holds it.
func TestRefuseLocalAddressExcept(t *testing.T) {
	allowed, err := egress.ParsePrefixes(" 127.0.0.1, 169.254.0.0/16,,::1 ")
	if err != nil {
		t.Fatal(err)
	}
	guard := egress.RefuseLocalAddressExcept(allowed)
	for _, tt := range []struct {
		address string
		allowed bool
	}{
		{"127.0.0.1:8080", true},
		{"[::ffff:127.0.0.1]:8080", true}, // the same, IPv4-mapped
		{"[::1]:8080", true},
		{"127.0.0.2:8080", false}, // loopback, not named
		{"0.0.0.0:8080", false},
		{"169.254.10.20:80", true},
		{"169.254.169.254:80", false}, // metadata, inside the allowed prefix
		{"169.254.170.2:80", false},
		{"[::ffff:169.254.169.254]:80", false},
		{"[fe80::1]:80", false},
		{"10.96.0.10:8080", true}, // a Service's ClusterIP: never refused
		{"not-an-address", false},
	} {
		err := guard("tcp", tt.address, nil)
		if got := err == nil; got != tt.allowed {
			t.Errorf("%s: allowed %v (%v), want %v", tt.address, got, err, tt.allowed)
		}
		if _, ok := errors.AsType[*egress.AddressNotAllowedError](err); err != nil && !ok {
			t.Errorf("%s: refused with %T, want *AddressNotAllowedError", tt.address, err)
		}
	}
	// No exception: the cloud calls' guard.
	if err := egress.RefuseLocalAddressExcept(nil)("tcp", "127.0.0.1:8080", nil); err == nil {
		t.Error("without exceptions loopback is let through")
	}
}

func TestParsePrefixesRejectsNames(t *testing.T) {
	for _, bad := range []string{"localhost", "10.0.0.0/33", "receiver.events.svc"} {
		if _, err := egress.ParsePrefixes(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}
