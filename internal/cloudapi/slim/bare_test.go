package slim_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/cloudapi/slim"
)

// What BareCharge counts is what the identity Slim builds is charged (Slim
// keeps an item as it is when that is no larger), so that a list can decide
// from charges whether identities fit.
func TestBareChargeIsTheChargeOfTheIdentity(t *testing.T) {
	slimmedOnce, err := slim.Item(new(cdcPipe("p-2", 200, 30)), 3<<10, slim.Pipes)
	if err != nil {
		t.Fatal(err)
	}
	withLongName := cdcPipe("p-3", 5, 0)
	withLongName.Name = ptr.To(strings.Repeat("<n>", 300))
	pipes := map[string]swv1.Pipe{
		"cdc pipe":                   cdcPipe("p-1", 40, 3),
		"slimmed once, its record":   slimmedOnce,
		"name with escapes":          withLongName,
		"otherFields alone":          cdcPipe("p-4", 0, 20),
		"identity and an empty list": {ID: ptr.To("p-5"), OtherFields: []string{}, Source: &swv1.PipeSource{}},
	}
	for name, p := range pipes {
		t.Run(name, func(t *testing.T) {
			s := slim.New[swv1.Pipe](slim.Pipes)
			got, err := s.BareCharge(&p)
			if err != nil {
				t.Fatal(err)
			}
			bare, charge, err := s.Slim(&p, 0)
			if err != nil {
				t.Fatal(err)
			}
			if min(got, bound.Charge(&p)) != charge || charge != bound.Charge(&bare) {
				t.Errorf("BareCharge %d; the identity Slim built is charged %d (Slim says %d), source %v", got, bound.Charge(&bare), charge, bare.Source)
			}
			if again, _ := s.BareCharge(&p); again != got { // now through the whole plan
				t.Errorf("BareCharge %d before the Slimmer slimmed, %d after", got, again)
			}
		})
	}
	units := 0
	if _, err := slim.New[swv1.Pipe](slim.Pipes).WithWork(func(n int) error { units += n; return nil }).BareCharge(new(cdcPipe("p-6", 40, 3))); err != nil || units == 0 {
		t.Errorf("BareCharge charged %d units of work (%v); want its walk charged", units, err)
	}
	ep := swv1.ReversePrivateEndpoint{ID: ptr.To("e-1"), Status: ptr.To("Ready")}
	for i := range 100 {
		ep.DNSNames = append(ep.DNSNames, fmt.Sprintf("vpce-%04d.eu-west-1.vpce.amazonaws.com", i))
	}
	alert := swv1.AlertStatus{ID: "a-1", Name: ptr.To("disk full"), Message: ptr.To(strings.Repeat("m", 4000))}
	if got, _ := slim.New[swv1.ReversePrivateEndpoint](slim.Endpoints).BareCharge(&ep); got != bound.Charge(new(mustSlim(t, ep, slim.Endpoints))) {
		t.Errorf("endpoint: BareCharge %d", got)
	}
	if got, _ := slim.New[swv1.AlertStatus](slim.Alerts).BareCharge(&alert); got != bound.Charge(new(mustSlim(t, alert, slim.Alerts))) {
		t.Errorf("alert: BareCharge %d", got)
	}
}

func mustSlim[T any](t *testing.T, item T, shape slim.Shape) T {
	t.Helper()
	out, err := slim.Item(&item, 0, shape)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mediumPipes are n Postgres pipes of about 1.5 kB of JSON each (22 table
// mappings), in id order: each is charged several KiB decoded, far over
// the 1 KiB floor, and about 500 bytes cut to its identity.
func mediumPipes(n int) []swv1.Pipe {
	pipes := make([]swv1.Pipe, n)
	for i := range pipes {
		pipes[i] = cdcPipe(fmt.Sprintf("p-%05d", i), 22, 0)
	}
	return pipes
}

// A list of many medium items that does not fit at the 1 KiB floor keeps
// every item, by identity, when the identities fit: no whole item goes.
// When they do not fit either, the longest prefix whose identities fit is
// cut to them, and whole items go from its end (issue 39: nothing was cut
// to its identity then, and half as many items fit).
func TestListCutsToIdentitiesBeforeWholeItemsGo(t *testing.T) {
	pipes := mediumPipes(3000)
	tests := map[string]struct {
		budget int
		// identities: every item is kept, some cut to their identity.
		identities bool
	}{
		"identities fit: all 3000 kept":                {budget: 2 << 20, identities: true},
		"identities do not fit: a prefix, by identity": {budget: 512 << 10},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			out := slim.List(pipes, tt.budget, slim.Pipes)
			n, _ := bound.Prefix(bound.Charges(out), tt.budget)
			bare := 0
			for i := range out {
				if out[i].Source == nil {
					bare++
				}
				if *out[i].ID != *pipes[i].ID || *out[i].Name != *pipes[i].Name || *out[i].State != "Running" || *out[i].SourceKind != "postgres" {
					t.Fatalf("item %d: identity lost: %+v", i, out[i])
				}
			}
			switch {
			case tt.identities && (n != len(pipes) || bare == 0):
				t.Errorf("%d of %d pipes fit the budget, %d cut to their identity; want all, by identity", n, len(pipes), bare)
			case !tt.identities && (bare == 0 || n == len(pipes) || n <= tt.budget/(1<<10)):
				t.Errorf("%d of %d pipes fit, %d cut to their identity; want a prefix of more pipes than fit at 1 KiB, by identity", n, len(pipes), bare)
			}
		})
	}
}
