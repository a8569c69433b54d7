package v1beta1

import (
	"os"
	"regexp"
	"testing"
	"time"
)

// The CRD's markers on spec.interval (default, minimum, maximum) say what the
// bounds of SyncInterval say: the API server refuses what the operator would
// bound, and defaults to what it would default to.
func TestIntervalMarkersAreTheBounds(t *testing.T) {
	src, err := os.ReadFile("servicewatch_types.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		marker *regexp.Regexp
		want   time.Duration
	}{
		{regexp.MustCompile(`\+kubebuilder:default="([^"]+)"\n(?:\s*//.*\n)*?\s*Interval `), DefaultInterval},
		{regexp.MustCompile(`duration\(self\) >= duration\('([^']+)'\)`), MinInterval},
		{regexp.MustCompile(`duration\(self\) <= duration\('([^']+)'\)`), MaxInterval},
	} {
		found := m.marker.FindSubmatch(src)
		if found == nil {
			t.Errorf("no marker %s on spec.interval", m.marker)
			continue
		}
		if got, err := time.ParseDuration(string(found[1])); err != nil || got != m.want {
			t.Errorf("the marker %s says %s, the bound is %s", m.marker, found[1], m.want)
		}
	}
}
