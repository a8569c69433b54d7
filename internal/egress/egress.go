package egress

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"syscall"
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
	// path is the path prefix, normalized (see NormalizePath); none: any
	// path.
	path []string
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
	}
	path, err := entryPath(u.EscapedPath())
	if err != nil {
		return allowEntry{}, err
	}
	e := allowEntry{raw: raw, host: HostName(u.Hostname()), port: u.Port(), path: path}
	if isURL {
		e.scheme = u.Scheme
		e.port = HostPort(u.Scheme, u.Port())
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
	var why error
	for _, e := range l.entries {
		if !e.matchesHost(u) {
			continue
		}
		err := e.allowsPath(u)
		if err == nil {
			return nil
		}
		why = cmp.Or(why, err)
	}
	if why != nil {
		return fmt.Errorf("%s is not among the API URLs the manager may call (%s): %w", u.Redacted(), l, why)
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

// matchesHost reports whether u has the entry's scheme, host and port.
func (e allowEntry) matchesHost(u *url.URL) bool {
	if e.scheme != "" && e.scheme != u.Scheme {
		return false
	}
	if e.port != "" && e.port != HostPort(u.Scheme, u.Port()) {
		return false
	}
	host := HostName(u.Hostname())
	if suffix, wild := strings.CutPrefix(e.host, "*"); wild {
		return strings.HasSuffix(host, suffix) && len(host) > len(suffix)
	}
	return host == e.host
}

// allowsPath returns nil if u's path is at or under the entry's prefix
// however a gateway reads it, and otherwise why not.
func (e allowEntry) allowsPath(u *url.URL) error {
	if len(e.path) == 0 {
		return nil
	}
	return underPrefix(u.EscapedPath(), e.path)
}

// entryPath is the path prefix of an entry, which must read the same to
// every gateway: no dot segment, no ";" parameter, no escaped separator.
func entryPath(escaped string) ([]string, error) {
	plain, err := plainSegments(escaped)
	if err != nil {
		return nil, err
	}
	normalized, err := NormalizePath(escaped)
	if err != nil || !slices.Equal(plain, normalized) {
		return nil, errors.New(`the path is not in normal form: a "." or ".." segment, a ";" parameter, an escaped "/" or "\", or a double escape`)
	}
	return normalized, nil
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

// metadataAddresses are the node-local credential and metadata services of
// the major clouds, each named with the provider's documentation that gives
// it. Those in 169.254.0.0/16 would be refused as link-local anyway; they
// are listed so that the list can be checked against the providers', and so
// that a refusal names them. Kubernetes' node-local DNS cache
// (169.254.20.10) is left to the link-local rule: it holds no credential,
// and the guard does not stand in its way, since name resolution does not
// dial through the guarded dialer.
var metadataAddresses = []struct {
	addr    netip.Addr
	service string
}{
	// AWS instance metadata (IMDS), IPv4 and the Nitro IPv6 endpoint:
	// docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-retrieval.html
	// Also Google Cloud's metadata server:
	// cloud.google.com/compute/docs/metadata/querying-metadata
	// Azure IMDS: learn.microsoft.com/azure/virtual-machines/instance-metadata-service
	// Oracle Cloud IMDS: docs.oracle.com/iaas/Content/Compute/Tasks/gettingmetadata.htm
	// DigitalOcean: docs.digitalocean.com/reference/api/metadata/
	// Hetzner Cloud: docs.hetzner.cloud (Server Metadata)
	// OpenStack Nova: docs.openstack.org/nova/latest/user/metadata.html
	{netip.MustParseAddr("169.254.169.254"), "instance metadata service (AWS, Google Cloud, Azure, Oracle Cloud, DigitalOcean, Hetzner, OpenStack)"},
	{netip.MustParseAddr("fd00:ec2::254"), "AWS instance metadata service (IPv6)"},
	// Amazon ECS task metadata and task role credentials:
	// docs.aws.amazon.com/AmazonECS/latest/developerguide/task-iam-roles.html
	{netip.MustParseAddr("169.254.170.2"), "Amazon ECS task credentials"},
	// EKS Pod Identity Agent, IPv4 and IPv6:
	// docs.aws.amazon.com/eks/latest/userguide/pod-id-how-it-works.html
	{netip.MustParseAddr("169.254.170.23"), "EKS Pod Identity Agent"},
	{netip.MustParseAddr("fd00:ec2::23"), "EKS Pod Identity Agent (IPv6)"},
	// Google Cloud metadata server over IPv6 (metadata.google.internal):
	// cloud.google.com/compute/docs/metadata/querying-metadata
	{netip.MustParseAddr("fd20:ce::254"), "Google Cloud metadata server (IPv6)"},
	// Azure WireServer, the host agent that serves extension settings:
	// learn.microsoft.com/azure/virtual-network/what-is-ip-address-168-63-129-16
	{netip.MustParseAddr("168.63.129.16"), "Azure WireServer"},
	// Alibaba Cloud ECS instance metadata:
	// alibabacloud.com/help/en/ecs/user-guide/view-instance-metadata
	{netip.MustParseAddr("100.100.100.200"), "Alibaba Cloud instance metadata"},
	// Oracle Cloud's older metadata address, still answered on some images:
	// docs.oracle.com/iaas/Content/Compute/Tasks/gettingmetadata.htm
	{netip.MustParseAddr("192.0.0.192"), "Oracle Cloud instance metadata (legacy address)"},
	// Tencent Cloud CVM instance metadata (metadata.tencentyun.com):
	// cloud.tencent.com/document/product/213/4934
	{netip.MustParseAddr("169.254.0.23"), "Tencent Cloud instance metadata"},
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
	for _, m := range metadataAddresses {
		if m.addr == ip {
			return "cloud metadata (" + m.service + ")"
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
	return ""
}
