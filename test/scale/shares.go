package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// sharesScenario (issue 30): three namespaces hold one key in Secrets of
// their own, with 50, 5 and 1 watches of services of their own, at 30 s,
// the real budget enforced and the manager's default client limits.
// Together they ask 112 calls per 30 s of a key that allows 10 per 11 s
// (4.1×); the 5-watch namespace asks 0.33 calls/s and the 1-watch one
// 0.07, each within an equal share (0.30, what the 1-watch one leaves going
// to the others). After the first syncs' backlog (2 min), the sync periods
// of the small namespaces' watches must stay within 10 % of 30 s (all of
// them from 2 to 6 min, and "steady": those that began once every watch had
// synced once), the
// 50-watch namespace's stretch and its watches say so (IntervalMet), and
// no call draws a 429.
//
// The interval is 5 m; at 5 m the 56 watches ask 0.37 calls/s, a
// third of the key, and nothing is stretched, with or without shares. 30 s
// puts the key over its budget, which is what shares are for.
func sharesScenario(ctx context.Context, e *runEnv) (string, error) {
	const (
		every   = 30 * time.Second
		backlog = 2 * time.Minute
		span    = 4 * time.Minute
	)
	key := keyPair{id: "shared-key", secret: "shared-secret"}
	sizes := []struct {
		namespace string
		watches   int
	}{{"shares-50", 50}, {"shares-5", 5}, {"shares-1", 1}}
	var ts []tenant
	for _, s := range sizes {
		ts = append(ts, tenant{namespace: s.namespace, key: key, token: "shared-token"})
	}
	if err := setUp(ctx, e, ts, "--management-budget", managementBudget, "--alert-budget", alertBudget); err != nil {
		return "", err
	}
	if _, err := e.startManager(ctx); err != nil {
		return "", err
	}
	var watches []*swv1.ServiceWatch
	serviceOf := map[string]string{} // service ID → namespace
	for i, s := range sizes {
		for j := range s.watches {
			service := distinctService(len(watches))
			serviceOf[service] = s.namespace
			watches = append(watches, newWatch(ts[i], fmt.Sprintf("w-%02d", j), watchSpec{serviceID: service, interval: every}))
		}
	}
	created := time.Now()
	if err := e.cp.createWatches(ctx, watches); err != nil {
		return "", err
	}
	firstSynced, err := waitAllReady(ctx, e, "", len(watches), backlog+span)
	if err != nil {
		return "", err
	}
	if err := sleepUntil(ctx, created.Add(backlog+span)); err != nil {
		return "", err
	}
	calls, rejected, pipes, err := keptCalls(ctx, e, created)
	if err != nil {
		return "", err
	}
	var cells []string
	for _, s := range sizes {
		own := selectCalls(pipes, func(c call) bool { return serviceOf[c.ServiceID] == s.namespace })
		p := periodsOf(own, created.Add(backlog), span, every)
		// Steady: the periods that began once every watch had synced once,
		// the first syncs' backlog over.
		steady := periodsOf(selectCalls(own, func(c call) bool { return !c.Time.Before(firstSynced) }), firstSynced, span, every)
		stretched, message, err := intervalMet(ctx, e.cp.client, s.namespace)
		if err != nil {
			return "", err
		}
		cells = append(cells, fmt.Sprintf("%d watches: %d of %d periods within 10%% of 30 s (%s–%s), steady %d of %d (%s–%s), %d say IntervalMet False%s",
			s.watches, p.within, p.count, seconds(p.shortest), seconds(p.longest),
			steady.within, steady.count, seconds(steady.shortest), seconds(steady.longest), stretched, message))
	}
	return fmt.Sprintf("%d × 429 of %d calls; every watch synced once after %s; %s", rejected, len(calls), seconds(firstSynced.Sub(created)), strings.Join(cells, "; ")), nil
}

// intervalMet counts the namespace's watches whose IntervalMet is False,
// and quotes one's message.
func intervalMet(ctx context.Context, c client.Client, namespace string) (stretched int, quote string, err error) {
	var list swv1.ServiceWatchList
	if err := c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return 0, "", err
	}
	var messages []string
	for i := range list.Items {
		if cond := list.Items[i].Condition(swv1.ConditionIntervalMet); cond != nil {
			messages = append(messages, cond.Message)
		}
	}
	if len(messages) == 0 {
		return 0, "", nil
	}
	sort.Strings(messages)
	return len(messages), fmt.Sprintf(" (%q)", messages[0]), nil
}

// refusedScenario (issue 30): a ClusterCloudAccount allows the namespace
// "ops" only; a watch in another namespace refers to it. It must be
// Stalled (AccountNotAllowed) before any Secret is read or any call made.
func refusedScenario(ctx context.Context, e *runEnv) (string, error) {
	ops := tenant{namespace: "ops", key: keyPair{id: "org-key", secret: "org-secret"}, token: "org-token"}
	other := tenant{namespace: "refused", key: keyPair{id: "own-key", secret: "own-secret"}, token: "own-token"}
	if err := setUp(ctx, e, []tenant{ops, other}); err != nil {
		return "", err
	}
	account := &swv1.ClusterCloudAccount{ObjectMeta: metav1.ObjectMeta{Name: "org"}, Spec: swv1.ClusterCloudAccountSpec{
		ManagementAPI: swv1.AccountAPISpec{SecretRef: swv1.SecretReference{Name: mgmtSecretName}},
		Conditions:    []swv1.AccountCondition{{Namespaces: []string{ops.namespace}}}}}
	if err := e.cp.client.Create(ctx, account); err != nil {
		return "", fmt.Errorf("creating the account: %w", err)
	}
	if _, err := e.startManager(ctx, "--account-namespace", ops.namespace); err != nil {
		return "", err
	}
	w := newWatch(other, "w", watchSpec{serviceID: distinctService(0), interval: 30 * time.Second})
	w.Spec.ManagementAPI = swv1.ManagementAPISpec{AccountRef: &swv1.AccountRef{Name: account.Name}}
	if err := e.cp.createWatches(ctx, []*swv1.ServiceWatch{w}); err != nil {
		return "", err
	}
	var got swv1.ServiceWatch
	stalled := waitUntil(ctx, time.Minute, func() bool {
		return e.cp.client.Get(ctx, client.ObjectKeyFromObject(w), &got) == nil && got.Condition(swv1.ConditionStalled) != nil
	})
	if !stalled {
		return "", errors.New("the watch was not Stalled within a minute")
	}
	gets, errGets := e.cp.secretGets(ctx)
	calls, errCalls := e.cloud.calls(ctx)
	return fmt.Sprintf("Stalled %s; %d Secret reads, %d cloud calls", got.Condition(swv1.ConditionStalled).Reason, gets, len(calls)), errors.Join(errGets, errCalls)
}

// sharesAccountScenario (issue 39): a namespace of 2 watches beside one of
// 25 on one ClusterCloudAccount's key, at 30 s, the real budget enforced
// and the manager's default client limits. The 25 ask 1.67 calls/s of a
// key that allows 0.91 (10 per 11 s), so they are stretched to their share;
// the 2 ask 0.13, well within theirs, and every one of their periods from
// 2 min on (the first syncs' backlog over) must stay within 10 % of 30 s.
// The issue saw them drift to 33.5 s in one run of three.
func sharesAccountScenario(ctx context.Context, e *runEnv) (string, error) {
	const (
		every   = 30 * time.Second
		backlog = 2 * time.Minute
		span    = 3 * time.Minute
	)
	ops := tenant{namespace: "ops", key: keyPair{id: "account-key", secret: "account-secret"}, token: "ops-token"}
	big := tenant{namespace: "shares-25", key: keyPair{id: "own-25", secret: "own-25-secret"}, token: "token-25"}
	small := tenant{namespace: "shares-2", key: keyPair{id: "own-2", secret: "own-2-secret"}, token: "token-2"}
	if err := setUp(ctx, e, []tenant{ops, big, small}, "--management-budget", managementBudget, "--alert-budget", alertBudget); err != nil {
		return "", err
	}
	account := &swv1.ClusterCloudAccount{ObjectMeta: metav1.ObjectMeta{Name: "shared"}, Spec: swv1.ClusterCloudAccountSpec{
		ManagementAPI: swv1.AccountAPISpec{SecretRef: swv1.SecretReference{Name: mgmtSecretName}},
		Conditions:    []swv1.AccountCondition{{Namespaces: []string{big.namespace, small.namespace}}}}}
	if err := e.cp.client.Create(ctx, account); err != nil {
		return "", fmt.Errorf("creating the account: %w", err)
	}
	if _, err := e.startManager(ctx, "--account-namespace", ops.namespace); err != nil {
		return "", err
	}
	sizes := []struct {
		t       tenant
		watches int
	}{{big, 25}, {small, 2}}
	var watches []*swv1.ServiceWatch
	serviceOf := map[string]string{} // service ID → namespace
	for _, s := range sizes {
		for j := range s.watches {
			service := distinctService(len(watches))
			serviceOf[service] = s.t.namespace
			w := newWatch(s.t, fmt.Sprintf("w-%02d", j), watchSpec{serviceID: service, interval: every})
			w.Spec.ManagementAPI = swv1.ManagementAPISpec{AccountRef: &swv1.AccountRef{Name: account.Name}}
			watches = append(watches, w)
		}
	}
	created := time.Now()
	if err := e.cp.createWatches(ctx, watches); err != nil {
		return "", err
	}
	if err := sleepUntil(ctx, created.Add(backlog+span)); err != nil {
		return "", err
	}
	calls, rejected, pipes, err := keptCalls(ctx, e, created)
	if err != nil {
		return "", err
	}
	var cells []string
	for _, s := range sizes {
		own := selectCalls(pipes, func(c call) bool { return serviceOf[c.ServiceID] == s.t.namespace })
		p := periodsOf(own, created.Add(backlog), span, every)
		stretched, _, err := intervalMet(ctx, e.cp.client, s.t.namespace)
		if err != nil {
			return "", err
		}
		cells = append(cells, fmt.Sprintf("%d watches: %d of %d periods within 10%% of 30 s (%s–%s), %d say IntervalMet False",
			s.watches, p.within, p.count, seconds(p.shortest), seconds(p.longest), stretched))
	}
	return fmt.Sprintf("%d × 429 of %d calls; %s", rejected, len(calls), strings.Join(cells, "; ")), nil
}

// keptCalls are the calls the fake cloud saw, written to the scenario's
// calls.tsv (times from created), with the count of 429s among them and the
// pipe lists.
func keptCalls(ctx context.Context, e *runEnv, created time.Time) (calls []call, rejected int, pipes []call, err error) {
	calls, err = e.cloud.calls(ctx)
	if err != nil {
		return nil, 0, nil, err
	}
	if err := writeCalls(e.dir, calls, created); err != nil {
		return nil, 0, nil, err
	}
	return calls, len(selectCalls(calls, withStatus(429))), selectCalls(calls, withOperation(fakecloud.OpListPipes)), nil
}
