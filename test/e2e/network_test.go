//go:build e2e

package e2e

import (
	"context"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testEgressGuard checks the rule of this workplace that test traffic never
// leaves the machine: the FORWARD chain's first rule drops what the Pod
// range sends to the external interface, and a Pod that tries to reach an
// address beyond it is stopped by that rule (its packet counter grows).
func testEgressGuard(t *testing.T) {
	if e2eEnv.podCIDR == "" || e2eEnv.extIf == "" || e2eEnv.egressComment == "" {
		t.Fatal("E2E_POD_CIDR, E2E_EXT_IF and E2E_EGRESS_COMMENT must be set")
	}
	first := forwardRules(t)
	if len(first) == 0 || !isEgressGuard(first[0]) {
		t.Fatalf("the first FORWARD rule is %q, want a DROP of %s to %s (comment %s)", strings.Join(first[:min(1, len(first))], ""), e2eEnv.podCIDR, e2eEnv.extIf, e2eEnv.egressComment)
	}
	// Neither the bridge plugin nor kube-proxy masquerades the Pod range out.
	nat := iptables(t, "-t", "nat", "-S", "POSTROUTING")
	if regexp.MustCompile(`-s ` + regexp.QuoteMeta(e2eEnv.podCIDR) + `.*MASQUERADE`).MatchString(nat) {
		t.Fatalf("POSTROUTING masquerades the Pod range:\n%s", nat)
	}

	restrictedNamespace(t, "e2e-egress")
	before := guardPackets(t)
	// The default gateway: the first hop out of the machine.
	gw := defaultGateway(t)
	r := probe(t, "e2e-egress", "egress", "default", "dial", "--address", net.JoinHostPort(gw, "443"), "--timeout", "3s")
	if r.Error == "" {
		t.Fatalf("a Pod connected to %s:443 outside the machine", gw)
	}
	if after := guardPackets(t); after <= before {
		t.Fatalf("the Pod's connection to %s failed (%s), but not at the egress guard: its counter stayed at %d", gw, r.Error, after)
	}
}

func iptables(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "iptables", args...).Output()
	if err != nil {
		t.Fatalf("iptables %v: %v", args, err)
	}
	return string(out)
}

func forwardRules(t *testing.T) []string {
	var rules []string
	for l := range strings.SplitSeq(iptables(t, "-S", "FORWARD"), "\n") {
		if strings.HasPrefix(l, "-A FORWARD ") {
			rules = append(rules, l)
		}
	}
	return rules
}

func isEgressGuard(rule string) bool {
	return strings.Contains(rule, "-s "+e2eEnv.podCIDR) && strings.Contains(rule, "-o "+e2eEnv.extIf) &&
		strings.Contains(rule, e2eEnv.egressComment) && strings.HasSuffix(rule, "-j DROP")
}

// guardPackets is the egress guard's packet counter.
func guardPackets(t *testing.T) int {
	t.Helper()
	for l := range strings.SplitSeq(iptables(t, "-L", "FORWARD", "-v", "-n", "-x"), "\n") {
		if strings.Contains(l, e2eEnv.egressComment) {
			f := strings.Fields(l)
			n, err := strconv.Atoi(f[0])
			if err != nil {
				t.Fatalf("egress guard line %q: %v", l, err)
			}
			return n
		}
	}
	t.Fatal("no egress guard in FORWARD")
	return 0
}

func defaultGateway(t *testing.T) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "ip", "-4", "route", "show", "default").Output()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(out))
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "via" {
			return f[i+1]
		}
	}
	t.Fatalf("no default gateway in %q", out)
	return ""
}
