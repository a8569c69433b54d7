package alerts_test

import (
	"fmt"
	"strings"
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/alerts"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// BenchmarkPickWorstSelector is the CPU of one watch's selection per sync
// (the selector tried on each alert as the list streams, then the pick)
// on a host's list of 4 MiB of names, with the costliest 256-character
// pattern: one name of 4 MiB, or a thousand of 4 KiB (MaxNameBytes).
func BenchmarkPickWorstSelector(b *testing.B) {
	sel := &swv1.AlertSelector{Name: "*" + strings.Repeat("a?", 127) + "b*"}
	for _, tt := range []struct {
		name             string
		alerts, nameSize int
	}{
		{"one name of 4 MiB", 1, 4 << 20},
		{"1000 names of 4 KiB", 1000, 4 << 10},
	} {
		b.Run(tt.name, func(b *testing.B) {
			var listing []cloudapi.AlertResult
			for i := range tt.alerts {
				listing = append(listing, listed(fmt.Sprintf("%06d", i), strings.Repeat("a", tt.nameSize)))
			}
			before := cpuTime()
			for b.Loop() {
				alerts.Pick(nil, sel, indexOf(listing, "", alerts.Need{Selector: sel}))
			}
			reportCPU(b, before)
		})
	}
}
