package egress

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// A path prefix in the allowlist is only a boundary if the gateway in front
// of the API reads the path as the allowlist does. Gateways do not agree:
// some resolve "." and ".." after percent-decoding (%2e%2e), Tomcat and the
// servers built like it drop ";" path parameters before resolving ("..;"
// is ".."), many treat %2F, %5C and "\" as separators. So a path is read
// here the most aggressive way any of them does, and a path is inside a
// prefix only if it is inside under that reading and under the plain one.

// separators are the spellings of "/" some gateway splits on.
var separators = strings.NewReplacer(`\`, "/", "%2f", "/", "%2F", "/", "%5c", "/", "%5C", "/")

// NormalizePath reads escaped (a URL path as sent, percent-escapes intact)
// the way a normalizing gateway would route it: "\", %2F and %5C split
// segments, each segment loses its ";" parameters and is percent-decoded
// (and loses parameters the decoding revealed), empty segments merge, and
// "." and ".." are resolved (RFC 3986, section 5.2.4). It returns the
// segments left. A path that climbs above the root, has an invalid escape,
// or is percent-encoded twice (what one gateway decodes once, another
// decodes twice) has no single reading: an error says so.
func NormalizePath(escaped string) ([]string, error) {
	var out []string
	for seg := range strings.SplitSeq(separators.Replace(escaped), "/") {
		seg, err := normalizeSegment(seg)
		if err != nil {
			return nil, err
		}
		switch seg {
		case "", ".":
		case "..":
			if len(out) == 0 {
				return nil, errors.New(`a ".." segment climbs above the root`)
			}
			out = out[:len(out)-1]
		default:
			out = append(out, seg)
		}
	}
	return out, nil
}

// normalizeSegment is one segment without its parameters, decoded.
func normalizeSegment(seg string) (string, error) {
	seg, _, _ = strings.Cut(seg, ";")
	decoded, err := url.PathUnescape(seg)
	if err != nil {
		return "", fmt.Errorf("segment %q: invalid percent-escape", seg)
	}
	if again, err := url.PathUnescape(decoded); err == nil && again != decoded {
		return "", fmt.Errorf("segment %q is percent-encoded twice", seg)
	}
	decoded, _, _ = strings.Cut(decoded, ";")
	return decoded, nil
}

// PathSegment escapes s to be placed in a URL path as exactly one segment
// holding s, or says why a gateway could read it otherwise: "." and "..",
// and any s that normalizing (see NormalizePath) would split, shorten or
// decode again, such as "a/b", `a\b`, "..;", "x;y" or "%2e%2e".
func PathSegment(s string) (string, error) {
	escaped := url.PathEscape(s)
	if s == "." || s == ".." {
		return "", fmt.Errorf("%q is a dot segment, which a server resolves instead of passing on", s)
	}
	segs, err := NormalizePath(escaped)
	if err != nil {
		return "", fmt.Errorf("%q cannot stay one path segment: %w", s, err)
	}
	if len(segs) != 1 || segs[0] != s {
		return "", fmt.Errorf(`%q cannot stay one path segment: a normalizing gateway would read it as %q; "/", "\", ";", "%%" escapes and dot segments have no place in it`,
			s, "/"+strings.Join(segs, "/"))
	}
	return escaped, nil
}

// underPrefix reports whether the escaped path lies at or under prefix
// (normalized segments) both as a normalizing gateway reads it and as it
// reads plainly (split on "/" only, each segment decoded, no segment
// resolved), so that no reading of it leaves the prefix.
func underPrefix(escaped string, prefix []string) error {
	normalized, err := NormalizePath(escaped)
	if err != nil {
		return err
	}
	if !hasPrefix(normalized, prefix) {
		return fmt.Errorf("its path reads as /%s once normalized", strings.Join(normalized, "/"))
	}
	plain, err := plainSegments(escaped)
	if err != nil {
		return err
	}
	if !hasPrefix(plain, prefix) {
		return errors.New("its path, read without normalizing, is not under the allowed prefix")
	}
	return nil
}

// plainSegments is the path read as RFC 3986 alone reads it: only "/"
// separates, each segment is decoded once, empty segments merge; a dot
// segment is refused, since whether it is resolved depends on the server.
func plainSegments(escaped string) ([]string, error) {
	var out []string
	for seg := range strings.SplitSeq(escaped, "/") {
		decoded, err := url.PathUnescape(seg)
		if err != nil {
			return nil, fmt.Errorf("segment %q: invalid percent-escape", seg)
		}
		switch decoded {
		case "":
		case ".", "..":
			return nil, errors.New(`the path has a "." or ".." segment`)
		default:
			out = append(out, decoded)
		}
	}
	return out, nil
}

func hasPrefix(segs, prefix []string) bool {
	if len(segs) < len(prefix) {
		return false
	}
	for i, p := range prefix {
		if segs[i] != p {
			return false
		}
	}
	return true
}
