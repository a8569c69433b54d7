package egress

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
)

// DialGuard is a net.Dialer Control hook: it runs for every address a dialer
// tries, after name resolution, and refuses a connection by returning an
// error.
type DialGuard func(network, address string, c syscall.RawConn) error

// ParsePrefixes parses comma-separated addresses and CIDR prefixes
// ("127.0.0.1", "10.0.0.0/8", "fd00::/8"); an address is a prefix of its
// whole length.
func ParsePrefixes(value string) ([]netip.Prefix, error) {
	var prefixes []netip.Prefix
	for raw := range strings.SplitSeq(value, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		if addr, err := netip.ParseAddr(raw); err == nil {
			prefixes = append(prefixes, netip.PrefixFrom(addr.WithZone(""), addr.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(raw)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an IP address nor a CIDR prefix", raw)
		}
		prefixes = append(prefixes, p.Masked())
	}
	return prefixes, nil
}

// RefuseLocalAddressExcept is RefuseLocalAddress that lets through the
// addresses within allowed: for a client whose destination the cluster
// admin sets, not a tenant (the change sink, on the manager's own Pod or
// node). A cloud metadata address is refused even within an allowed prefix:
// no receiver of the operator's lives there, and excepting 169.254.0.0/16
// for a node-local receiver must not open the node's credentials.
func RefuseLocalAddressExcept(allowed []netip.Prefix) DialGuard {
	if len(allowed) == 0 {
		return RefuseLocalAddress
	}
	return func(network, address string, c syscall.RawConn) error {
		refused := RefuseLocalAddress(network, address, c)
		if refused == nil {
			return nil
		}
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return refused
		}
		ip, err := netip.ParseAddr(host)
		if err != nil || isMetadataAddress(ip) {
			return refused
		}
		ip = ip.WithZone("").Unmap()
		for _, p := range allowed {
			if p.Contains(ip) {
				return nil
			}
		}
		return refused
	}
}

// isMetadataAddress reports whether ip is a cloud metadata address, in any
// form localKind reads (IPv4-mapped, IPv4-compatible, NAT64).
func isMetadataAddress(ip netip.Addr) bool {
	return strings.HasPrefix(localKind(ip), "cloud metadata")
}
