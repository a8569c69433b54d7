package main

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

// rateFlag is ratebudget.ParseRateLimit as a flag (the syntax is tested there,
// TestParseRateLimit): on the command line it keeps what was parsed, prints
// it back in the same syntax, turns the limit off with 0, and refuses a bad
// value with the parser's error, leaving the flag as it was.
func TestRateFlagTakesParseRateLimitsSyntax(t *testing.T) {
	f := rateFlag{Requests: 10, Per: 10 * time.Second, Burst: 10}
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&f, "management-rate-limit", "")

	if err := fs.Parse([]string{"--management-rate-limit=100/1m/10"}); err != nil {
		t.Fatal(err)
	}
	want := rateFlag{Requests: 100, Per: time.Minute, Burst: 10}
	if f != want {
		t.Errorf("after 100/1m/10 the flag is %+v, want %+v", f, want)
	}
	if got := f.String(); got != "100/1m0s/10" {
		t.Errorf("the flag prints %q, want 100/1m0s/10", got)
	}

	err := fs.Parse([]string{"--management-rate-limit=10/soon"})
	if err == nil || !strings.Contains(err.Error(), `period must be a positive duration, got "soon"`) {
		t.Errorf("10/soon: error %v, want the parser's", err)
	}
	if f != want {
		t.Errorf("a refused value changed the flag to %+v, want %+v", f, want)
	}

	if err := fs.Parse([]string{"--management-rate-limit=0"}); err != nil {
		t.Fatal(err)
	}
	if f.Requests != -1 || f.String() != "0" {
		t.Errorf("0 gives %+v printed %q, want the limit off (Requests -1) printed 0", f, f.String())
	}
}
