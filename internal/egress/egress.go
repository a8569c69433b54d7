package egress

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"syscall"

	"github.com/servicewatch/servicewatch/internal/hostkey"
)

// URLAllowList is the API base URLs and hosts watches may use. The zero
// value allows every URL.
type URLAllowList struct {
	entries []allowEntry
}

// allowEntry is one entry of a URLAllowList.
type allowEntry struct {
	raw string
	// scheme is "http" or "https"; empty for a host entry: either.
	scheme string
	// host is lower case, without a trailing dot; a leading "*." (kept)
	// matches any subdomain, not the domain itself.
	host string
	// port is the port to match; empty for a host entry without one: any.
	port string
	// path is the path prefix without its trailing slash; empty: any path.
	path string
}

// ParseURLAllowList parses entries, each either a base URL
// ("https://api.example.com", "https://gateway.example.com/cloud") or a host
// with an optional port ("api.example.com", "alerts.example.com:8443",
// "*.example.com"). A URL allows the same scheme, host and port (the
// scheme's default when it names none) and the paths at or under its own; a
// host allows http and https on that host, on any port unless it names
// one. "*." allows every subdomain of what follows. No entries: every URL is
// allowed.
func ParseURLAllowList(entries []string) (URLAllowList, error) {
	var l URLAllowList
	for _, raw := range entries {
		e, err := parseAllowEntry(strings.TrimSpace(raw))
		if err != nil {
			return URLAllowList{}, fmt.Errorf("allowed API URL %q: %w", raw, err)
		}
		l.entries = append(l.entries, e)
	}
	return l, nil
}

func parseAllowEntry(raw string) (allowEntry, error) {
	isURL := strings.Contains(raw, "://")
	text := raw
	if !isURL {
		text = "https://" + raw
	}
	u, err := url.Parse(text)
	switch {
	case err != nil:
		return allowEntry{}, errors.New("neither a URL nor a host")
	case u.Scheme != "http" && u.Scheme != "https":
		return allowEntry{}, errors.New("not an http:// or https:// URL")
	case u.Hostname() == "" || u.Hostname() == "*.":
		return allowEntry{}, errors.New("no host")
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return allowEntry{}, errors.New("a user, query or fragment has no place in it")
	case strings.Contains(strings.TrimPrefix(u.Hostname(), "*."), "*"):
		return allowEntry{}, errors.New(`"*" may only start the host, as "*."`)
	case !isURL && u.Path != "":
		return allowEntry{}, errors.New("a host has no path; write a URL for a path prefix")
	case hasDotSegment(u.Path):
		return allowEntry{}, errors.New(`the path has a "." or ".." segment`)
	}
	e := allowEntry{raw: raw, host: hostkey.Name(u.Hostname()), port: u.Port(), path: strings.TrimRight(u.Path, "/")}
	if isURL {
		e.scheme = u.Scheme
		e.port = hostkey.Port(u.Scheme, u.Port())
	}
	return e, nil
}

// Allows returns nil if watches may use baseURL, and otherwise an error that
// says why and what is allowed.
func (l URLAllowList) Allows(baseURL string) error {
	if len(l.entries) == 0 {
		return nil
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return fmt.Errorf("%q is not an absolute http:// or https:// URL", baseURL)
	}
	for _, e := range l.entries {
		if e.matches(u) {
			return nil
		}
	}
	return fmt.Errorf("%s is not among the API URLs the manager may call (%s)", u.Redacted(), l)
}

// IsEmpty reports whether the list allows every URL.
func (l URLAllowList) IsEmpty() bool { return len(l.entries) == 0 }

// String lists the entries as they were given, comma-separated.
func (l URLAllowList) String() string {
	raw := make([]string, len(l.entries))
	for i, e := range l.entries {
		raw[i] = e.raw
	}
	return strings.Join(raw, ",")
}

func (e allowEntry) matches(u *url.URL) bool {
	if e.scheme != "" && e.scheme != u.Scheme {
		return false
	}
	if e.port != "" && e.port != hostkey.Port(u.Scheme, u.Port()) {
		return false
	}
	host := hostkey.Name(u.Hostname())
	if suffix, wild := strings.CutPrefix(e.host, "*"); wild {
		if !strings.HasSuffix(host, suffix) || len(host) == len(suffix) {
			return false
		}
	} else if host != e.host {
		return false
	}
	if e.path == "" {
		return true
	}
	// A "." or ".." segment could climb out of the prefix once the server
	// resolves it; %2F is decoded in u.Path, so an escaped one is seen too.
	if hasDotSegment(u.Path) {
		return false
	}
	p := strings.TrimRight(u.Path, "/")
	return p == e.path || strings.HasPrefix(p, e.path+"/")
}

func hasDotSegment(path string) bool {
	for seg := range strings.SplitSeq(path, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// AddressNotAllowedError is a connection RefuseLocalAddress refused to
// open; the cloud client tells it from other dial failures by its type.
type AddressNotAllowedError struct {
	address string
	kind    string
}

// Error says which address was refused and why the operator refuses it.
func (e *AddressNotAllowedError) Error() string {
	return fmt.Sprintf("refused to connect to %s, a %s address: the operator does not call its own host, its node or the cloud metadata service", e.address, e.kind)
}

// RefuseLocalAddress is a net.Dialer Control hook. It runs for every address
// the dialer tries, after name resolution and before the connection is
// opened, so no DNS answer (however short its TTL) can lead past it.
func RefuseLocalAddress(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return &AddressNotAllowedError{address: address, kind: "unparsable"}
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return &AddressNotAllowedError{address: address, kind: "unparsable"}
	}
	if kind := localKind(ip); kind != "" {
		return &AddressNotAllowedError{address: address, kind: kind}
	}
	return nil
}

// The node-local credential and metadata services of the major clouds that
// are not at a link-local address (those at one, such as 169.254.169.254 of
// AWS, Azure, Google Cloud and Oracle Cloud, 169.254.170.2 of Amazon ECS and
// 169.254.170.23 of the EKS Pod Identity Agent, are refused as link-local).
// Each is named by its provider's documentation.
var metadataAddresses = []netip.Addr{
	netip.MustParseAddr("fd00:ec2::254"),   // AWS instance metadata (IMDS) over IPv6
	netip.MustParseAddr("fd00:ec2::23"),    // the EKS Pod Identity Agent over IPv6
	netip.MustParseAddr("fd20:ce::254"),    // Google Cloud metadata server over IPv6
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud instance metadata
	netip.MustParseAddr("168.63.129.16"),   // Azure WireServer (host agent, extension settings)
}

// nat64Prefix is the well-known NAT64 prefix (RFC 6052): 64:ff9b::a9fe:a9fe
// reaches 169.254.169.254 where a NAT64 gateway runs.
var nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")

// localKind names the kind of ip if the client must not connect to it:
// loopback (127.0.0.0/8, ::1), unspecified (0.0.0.0/8, ::; Linux connects
// those to the host itself), link-local (169.254.0.0/16, fe80::/10, which
// hold the cloud metadata service, and link-local multicast) or a cloud
// metadata address, also when wrapped in an IPv4-mapped, IPv4-compatible or
// NAT64 IPv6 address. "" for any other address.
func localKind(ip netip.Addr) string {
	ip = ip.WithZone("").Unmap()
	if ip.Is6() {
		b := ip.As16()
		if nat64Prefix.Contains(ip) || (b == [16]byte{12: b[12], 13: b[13], 14: b[14], 15: b[15]} && b[12]|b[13] != 0) {
			// The IPv4 address in the last 32 bits; "::1" and "::" are
			// themselves, not IPv4-compatible forms.
			ip = netip.AddrFrom4([4]byte(b[12:]))
		}
	}
	switch {
	case ip.IsLoopback():
		return "loopback"
	case ip.IsUnspecified(), ip.Is4() && ip.As4()[0] == 0:
		return "unspecified"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "link-local"
	}
	if slices.Contains(metadataAddresses, ip) {
		return "cloud metadata"
	}
	return ""
}
