package egress

import (
	"net/url"
	"strings"
)

// HostKey returns the key of the host hostport (a URL's authority without user
// info, such as "API.example.com:443" or "[::1]:8443") reached with scheme:
// the host in lower case without a trailing dot, IPv6 addresses in
// brackets, and its port unless it is the scheme's default. Two authorities
// with one key reach the same server the same way.
func HostKey(scheme, hostport string) string {
	hp := &url.URL{Host: hostport}
	host, port := HostName(hp.Hostname()), hp.Port()
	if port == DefaultPort(scheme) {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port == "" {
		return host
	}
	return host + ":" + port
}

// HostKeyOfURL returns the key of the host of u (see HostKey).
func HostKeyOfURL(u *url.URL) string { return HostKey(u.Scheme, u.Host) }

// HostKeyFromURL returns the key of the host of the URL raw (see HostKey), or raw itself
// when it does not parse or names no host: such a URL reaches no server, and
// keying it by its text keeps it apart from every one that does.
func HostKeyFromURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	return HostKeyOfURL(u)
}

// HostName normalises a host name or address without port or brackets: lower
// case, without the trailing dot of a fully qualified name.
func HostName(host string) string { return strings.TrimSuffix(strings.ToLower(host), ".") }

// DefaultPort is the port scheme implies when a URL names none: "80" for
// http, "443" for https, "" for any other.
func DefaultPort(scheme string) string {
	switch strings.ToLower(scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// HostPort is the port a URL of scheme with the explicit port port (possibly
// "") connects to.
func HostPort(scheme, port string) string {
	if port != "" {
		return port
	}
	return DefaultPort(scheme)
}
