package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// The fairness scenarios (issue 17): one tenant does what it may, and a new
// watch in another namespace, on a healthy key, must be Ready within 2 s.
// The numbers of watches and hosts come from the manager's own defaults, so
// that each manager is measured where its slots are full; the manager's own
// rate limits are off (each tenant has one key, whose default budget would
// otherwise admit only a few of its first syncs at once), so that the slots,
// not the budgets, are what is measured.

// slotDefaults are the manager's read slots: in all, per host, and per
// namespace (0 when the manager has no such bound).
type slotDefaults struct{ all, perHost, perNamespace int }

func readSlotDefaults(ctx context.Context, e *runEnv) (slotDefaults, error) {
	d, err := e.managerFlagDefaults(ctx)
	if err != nil {
		return slotDefaults{}, err
	}
	s := slotDefaults{all: d["max-concurrent-syncs"], perHost: d["max-syncs-per-host"], perNamespace: d["max-syncs-per-namespace"]}
	if s.all == 0 || s.perHost == 0 {
		return s, fmt.Errorf("the manager has no --max-concurrent-syncs or --max-syncs-per-host default: %v", d)
	}
	return s, nil
}

// hostVariant is the fake cloud's URL under the i-th of 512 host names that
// all lead to it: "localhost" spelled in other letter cases, as a tenant
// may (the hosts are the tenant's choice).
func hostVariant(cloudURL string, i int) string {
	u, err := url.Parse(cloudURL)
	if err != nil {
		return cloudURL
	}
	name := []byte("localhost")
	for b := range name {
		if i&(1<<b) != 0 {
			name[b] = strings.ToUpper(string(name[b]))[0]
		}
	}
	u.Host = string(name) + ":" + u.Port()
	return u.String()
}

// onHosts points the watch's APIs at the URLs ("" leaves the manager's
// default).
func onHosts(w *swv1.ServiceWatch, management, alerts string) *swv1.ServiceWatch {
	w.Spec.ManagementAPI.URL = management
	if w.Spec.AlertAPI != nil {
		w.Spec.AlertAPI.URL = alerts
	}
	return w
}

// fairAlertHostScenario (a): watches whose alert API hangs read the shared
// management host with a made-up key (the 401 comes at once). As many as the
// host has slots, at most 3 per namespace (so that a per-namespace bound is
// not what saves the victim).
func fairAlertHostScenario(ctx context.Context, e *runEnv) (string, error) {
	slots, err := readSlotDefaults(ctx, e)
	if err != nil {
		return "", err
	}
	n := slots.perHost
	noisy := makeTenants("hang-alerts", (n+2)/3)
	fresh := makeTenants("fresh", 1)[0]
	// The noisy tenants' keys are not the cloud's: their management calls
	// get a 401 at once.
	if err := e.startCloud(ctx, cloudData([]tenant{fresh})); err != nil {
		return "", err
	}
	for _, t := range append(noisy, fresh) {
		if err := e.cp.createTenant(ctx, t); err != nil {
			return "", err
		}
	}
	var watches []*swv1.ServiceWatch
	for i := range n {
		id := fmt.Sprintf("hang-%02d", i)
		if err := e.cloud.setFault(ctx, fakecloud.OpGetAlert, fakecloud.Fault{Hang: true, AlertID: id}); err != nil {
			return "", err
		}
		w := newWatch(noisy[i/3], fmt.Sprintf("w-%02d", i), watchSpec{serviceID: distinctService(i), alertIDs: []string{id}})
		watches = append(watches, onHosts(w, e.cloudURL, hostVariant(e.cloudURL, 1)))
	}
	return freshAfterHangs(ctx, e, watches, fresh, fmt.Sprintf("%d watches in %d namespaces, alert host hanging", n, len(noisy)))
}

// fairHostsScenario (b): one namespace's watches hang on max-concurrent-syncs
// ÷ max-syncs-per-host + 2 hosts, each host filled.
func fairHostsScenario(ctx context.Context, e *runEnv) (string, error) {
	slots, err := readSlotDefaults(ctx, e)
	if err != nil {
		return "", err
	}
	hosts := slots.all/slots.perHost + 2
	noisy, fresh := makeTenants("hang-hosts", 1)[0], makeTenants("fresh", 1)[0]
	if err := setUp(ctx, e, []tenant{noisy, fresh}); err != nil {
		return "", err
	}
	if err := hangKey(ctx, e, noisy); err != nil {
		return "", err
	}
	var watches []*swv1.ServiceWatch
	for h := range hosts {
		for i := range slots.perHost {
			w := newWatch(noisy, fmt.Sprintf("h%02d-%02d", h, i), watchSpec{serviceID: distinctService(h*slots.perHost + i)})
			watches = append(watches, onHosts(w, hostVariant(e.cloudURL, h), ""))
		}
	}
	return freshAfterHangs(ctx, e, watches, fresh, fmt.Sprintf("%d watches hanging on %d hosts", len(watches), hosts))
}

// fairBurstScenario (c): one namespace creates n watches at once on a cloud
// of 200 ms; another namespace's new watch, on the same host, right after.
func fairBurstScenario(n int) func(context.Context, *runEnv) (string, error) {
	return func(ctx context.Context, e *runEnv) (string, error) {
		busy, fresh := makeTenants("burst", 1)[0], makeTenants("fresh", 1)[0]
		if err := setUp(ctx, e, []tenant{busy, fresh}, "--latency", "200ms"); err != nil {
			return "", err
		}
		if _, err := e.runFleet(ctx, spreadWatches([]tenant{busy}, n, watchSpec{}), noClientLimits...); err != nil {
			return "", err
		}
		made, err := callsMade(ctx, e)
		if err != nil {
			return "", err
		}
		return timeToReady(ctx, e, fresh, "new", fmt.Sprintf("created after another namespace's %d; %s", n, made))
	}
}

// fairSharedHostScenario (d): on the one management host every tenant
// shares, one namespace's 20 watches read services whose calls hang until
// the client's timeout.
func fairSharedHostScenario(ctx context.Context, e *runEnv) (string, error) {
	noisy, fresh := makeTenants("hang-services", 1)[0], makeTenants("fresh", 1)[0]
	if err := setUp(ctx, e, []tenant{noisy, fresh}); err != nil {
		return "", err
	}
	if err := hangKey(ctx, e, noisy); err != nil {
		return "", err
	}
	return freshAfterHangs(ctx, e, spreadWatches([]tenant{noisy}, 20, watchSpec{}), fresh, "20 watches hanging on the shared host")
}

// freshAfterHangs runs the manager without client limits, creates the
// noisy watches, lets their calls hang (or queue) for 3 s, and then times a
// new watch of fresh to Ready; what says what hangs.
func freshAfterHangs(ctx context.Context, e *runEnv, noisy []*swv1.ServiceWatch, fresh tenant, what string) (string, error) {
	if _, err := e.runFleet(ctx, noisy, noClientLimits...); err != nil {
		return "", err
	}
	if err := sleepUntil(ctx, time.Now().Add(3*time.Second)); err != nil {
		return "", err
	}
	made, err := callsMade(ctx, e)
	if err != nil {
		return "", err
	}
	return timeToReady(ctx, e, fresh, "new", what+"; "+made)
}

// hangKey makes the management calls made with t's key hang.
func hangKey(ctx context.Context, e *runEnv, t tenant) error {
	for _, op := range []fakecloud.Operation{fakecloud.OpListPipes, fakecloud.OpListReversePrivateEndpoints} {
		if err := e.cloud.setFault(ctx, op, fakecloud.Fault{Hang: true, KeyID: t.key.id}); err != nil {
			return err
		}
	}
	return nil
}

// callsMade tells how many calls of each kind the other tenants had made
// when the new watch was created: that their calls hang (or queue) as the
// scenario says.
func callsMade(ctx context.Context, e *runEnv) (string, error) {
	calls, err := e.cloud.calls(ctx)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d list-pipes and %d get-alert calls made before it",
		len(selectCalls(calls, withOperation(fakecloud.OpListPipes))), len(selectCalls(calls, withOperation(fakecloud.OpGetAlert)))), nil
}
