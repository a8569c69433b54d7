package controller_test

import (
	"fmt"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// Watches that read the same service with the same key, and the same alerts
// with the same token, share the calls: per interval the cloud sees one list
// of pipes, one of endpoints and one call per distinct alert, whatever the
// number of watches. A watch of the same service with another key and token
// shares nothing with them: it makes calls of its own.
func TestWatchesOfOneServiceShareTheirCalls(t *testing.T) {
	t.Parallel()
	const (
		n        = 10
		interval = 30 * time.Second
	)
	f := newFixture(t)
	other := fakecloud.ManagementKey{KeyID: "other-" + f.keyID, KeySecret: secretMarker + "other-" + f.ns}
	otherToken := secretMarker + "other-token-" + f.ns
	data := f.fake.Data()
	data.MoreManagementKeys = append(data.MoreManagementKeys, other)
	data.MoreAlertTokens = append(data.MoreAlertTokens, otherToken)
	f.fake.SetData(data)
	f.createSecrets()
	f.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "other-api-key", Namespace: f.ns},
		StringData: map[string]string{"keyId": other.KeyID, "keySecret": other.KeySecret}})
	f.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "other-token", Namespace: f.ns},
		StringData: map[string]string{"token": otherToken}})

	alerts := []string{fakecloud.DefaultAlertID, fakecloud.SecondAlertID}
	names := make([]string, 0, n+1)
	for i := range n {
		w := f.newWatch(fmt.Sprintf("shared-%d", i), alerts...)
		w.Spec.Interval = metav1.Duration{Duration: interval}
		f.create(w)
		names = append(names, w.Name)
	}
	loner := f.newWatch("other-key", alerts...)
	loner.Spec.Interval = metav1.Duration{Duration: interval}
	loner.Spec.ManagementAPI.SecretRef.Name = "other-api-key"
	loner.Spec.AlertAPI.SecretRef.Name = "other-token"
	f.create(loner)
	names = append(names, loner.Name)
	for _, name := range names {
		f.waitFor(name, 20*time.Second, "Ready", isReady)
	}
	readyAt := time.Now()

	// The watches sync again together at their phase, 15 to 45 s after
	// their first sync; a sync that a late Secret event caused comes within
	// a second or two of it. The round is measured from its first call to
	// well before the next one, in real time: the manager that schedules
	// the rounds is the suite's, on the real clock.
	var roundStart time.Time
	deadline := readyAt.Add(50 * time.Second)
	for roundStart.IsZero() {
		if time.Now().After(deadline) {
			t.Fatal("no periodic sync within 50s of all watches being Ready")
		}
		time.Sleep(250 * time.Millisecond)
		for _, c := range f.fake.CallLog() {
			if c.Time.After(readyAt.Add(10 * time.Second)) {
				roundStart = c.Time
				break
			}
		}
	}
	roundEnd := roundStart.Add(interval * 2 / 3)
	time.Sleep(time.Until(roundEnd))

	type callKind struct {
		op          fakecloud.Operation
		alertID     string
		fingerprint string
	}
	got := map[callKind]int{}
	for _, c := range f.fake.CallLog() {
		if !c.Time.Before(roundStart) && c.Time.Before(roundEnd) {
			got[callKind{c.Operation, c.AlertID, c.KeyFingerprint}]++
		}
	}
	key := fakecloud.ManagementKey{KeyID: f.keyID, KeySecret: f.keySecret}
	want := map[callKind]int{}
	for _, creds := range []struct{ key, token string }{
		{key.Fingerprint(), fakecloud.TokenFingerprint(f.token)},
		{other.Fingerprint(), fakecloud.TokenFingerprint(otherToken)},
	} {
		want[callKind{fakecloud.OpListPipes, "", creds.key}] = 1
		want[callKind{fakecloud.OpListReversePrivateEndpoints, "", creds.key}] = 1
		want[callKind{fakecloud.OpListAlerts, "", creds.token}] = 1 // the host's list, for every alert
	}
	if !maps.Equal(got, want) {
		t.Errorf("calls in the round from %s to %s:\n got %v\nwant %v (one of each per credential)",
			roundStart.Format(time.StampMilli), roundEnd.Format(time.StampMilli), got, want)
	}
	for _, name := range names {
		if w := f.get(name); !isReady(w) || !w.Status.LastSyncTime.After(readyAt) {
			t.Errorf("%s: Ready %v, last synced %v: it did not sync in the round", name, isReady(w), w.Status.LastSyncTime)
		}
		if w := f.get(name); w.Status.Summary.Pipes != 8 || len(w.Status.Alerts) != 2 || w.Status.Alerts[1].ID != fakecloud.SecondAlertID {
			t.Errorf("%s: a shared read did not give the watch its data: %+v", name, w.Status.Summary)
		}
	}
}
