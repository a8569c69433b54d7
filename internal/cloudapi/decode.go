package cloudapi

import (
	"errors"
	"fmt"
	"mime"
	"strings"

	"github.com/servicewatch/servicewatch/internal/bound"
)

// checkContentType accepts what a JSON API may plausibly send on a success:
// no content type, application/json, any +json type, text/json, and
// text/plain (some gateways mislabel JSON; the body must still parse).
// Anything else, an HTML page from a captive portal or a CDN in particular,
// is not the API's answer.
func checkContentType(contentType string) error {
	if strings.TrimSpace(contentType) == "" {
		return nil
	}
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) {
		return fmt.Errorf("unparsable content type %q", bound.CutRunes(contentType, 64))
	}
	switch {
	case mediaType == "application/json", mediaType == "text/json", mediaType == "text/plain",
		strings.HasSuffix(mediaType, "+json"):
		return nil
	}
	return fmt.Errorf("content type %q is %w", bound.CutRunes(mediaType, 64), errNotJSON)
}

// errNotJSON is a success whose content type cannot be the API's JSON.
var errNotJSON = errors.New("not JSON")
