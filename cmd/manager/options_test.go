package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestFlagsAreUnchanged: every flag keeps its name, type, default and help
// as the manager had them when they were parsed in one function
// (testdata/flags.golden was printed by that code, as `manager -h` prints
// it), whichever options struct binds it now. A flag added on purpose goes
// into the golden with its options.
func TestFlagsAreUnchanged(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "") // the default of --account-namespace
	o := newOptions()
	fs := newFlagSet(&o)
	var got bytes.Buffer
	fs.SetOutput(&got)
	fs.PrintDefaults()
	want, err := os.ReadFile(filepath.Join("testdata", "flags.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("the flags differ from testdata/flags.golden; got:\n%s", got.String())
	}
}

// TestEachOptionsValidates: each options struct refuses its own bad values,
// whatever the others hold.
func TestEachOptionsValidates(t *testing.T) {
	for _, c := range []struct {
		args []string
		bad  func(*options) flagOptions
	}{
		{[]string{"--sync-timeout=0s"}, func(o *options) flagOptions { return &o.reconciler }},
		{[]string{"--cloud-max-response-bytes=0"}, func(o *options) flagOptions { return &o.cloud }},
		{[]string{"--reserved-budget-share=2"}, func(o *options) flagOptions { return &o.budgets }},
		{[]string{"--total-status-budget=-1"}, func(o *options) flagOptions { return &o.statusBudget }},
		{[]string{"--leader-elect", "--leader-election-id="}, func(o *options) flagOptions { return &o.leaderElection }},
	} {
		o := newOptions()
		if err := newFlagSet(&o).Parse(c.args); err != nil {
			t.Fatal(err)
		}
		for _, p := range o.parts() {
			err := p.Validate()
			if wantBad := p == c.bad(&o); (err != nil) != wantBad {
				t.Errorf("%v: %T.Validate() = %v, want an error: %v", c.args, p, err, wantBad)
			}
		}
	}
}
