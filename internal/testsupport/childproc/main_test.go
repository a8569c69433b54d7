package childproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
)

// A driver's error is printed once, under its name; an interrupted run says
// so instead of "context canceled"; a run that succeeds prints nothing.
func TestDriveReportsTheRunsError(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"success", nil, ""},
		{"failure", errors.New("the fake cloud did not start"), "demo: the fake cloud did not start\n"},
		{"interrupted", fmt.Errorf("waiting for Ready: %w", context.Canceled), "demo: interrupted\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			got := drive("demo", func(ctx context.Context) error {
				if ctx.Err() != nil {
					t.Errorf("the run's context ended before the run: %v", ctx.Err())
				}
				return tc.err
			}, &stderr)
			if !errors.Is(got, tc.err) {
				t.Errorf("drive returned %v, want %v", got, tc.err)
			}
			if stderr.String() != tc.want {
				t.Errorf("printed %q, want %q", stderr.String(), tc.want)
			}
		})
	}
}
