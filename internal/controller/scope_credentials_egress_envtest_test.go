package controller_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// notAllowedFallbackURL is the suite manager's --management-api-url and
// --alert-api-url: not on its allow list, which holds 127.0.0.1 only.
const notAllowedFallbackURL = "http://localhost:9/"

// A watch whose URL the manager may not call is Stalled with URLNotAllowed
// before its Secret is read (the Secret does not exist, yet the reason is
// not SecretNotFound) and without a call: the URL leads to the fake cloud
// under another name, and the fake sees nothing. The manager's fallback
// URLs are checked the same way. Pointing the watch at an allowed URL
// recovers it.
func TestURLNotAllowed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	fake, err := url.Parse(f.fake.URL)
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := "http://localhost:" + fake.Port()
	w := f.newWatch("elsewhere", fakecloud.DefaultAlertID)
	w.Spec.ManagementAPI.URL = elsewhere
	w.Spec.AlertAPI.URL = elsewhere
	f.create(w)

	w = f.waitFor("elsewhere", 20*time.Second, "Stalled URLNotAllowed",
		conditionIs(swv1.ConditionStalled, metav1.ConditionTrue, swv1.ReasonURLNotAllowed))
	for cond, field := range map[string]string{
		swv1.ConditionPipesSynced:                   "spec.managementApi.url",
		swv1.ConditionReversePrivateEndpointsSynced: "spec.managementApi.url",
		swv1.ConditionAlertsSynced:                  "spec.alertApi.url",
	} {
		c := meta.FindStatusCondition(w.Status.Conditions, cond)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != swv1.ReasonURLNotAllowed {
			t.Errorf("%s: %+v, want False/URLNotAllowed", cond, c)
			continue
		}
		for _, want := range []string{field, elsewhere, "127.0.0.1", "--allowed-api-urls"} {
			if !strings.Contains(c.Message, want) {
				t.Errorf("%s message %q does not mention %q", cond, c.Message, want)
			}
		}
	}
	if !conditionIs(swv1.ConditionReady, metav1.ConditionFalse, swv1.ReasonURLNotAllowed)(w) {
		t.Errorf("Ready is not False/URLNotAllowed: %+v", meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionReady))
	}
	if calls := f.fake.CallLog(); len(calls) != 0 {
		t.Errorf("the fake cloud got %d calls for a URL the manager may not call: %+v", len(calls), calls)
	}

	t.Run("the manager's fallback URLs", func(t *testing.T) {
		fallback := f.newWatch("fallback", fakecloud.DefaultAlertID)
		fallback.Spec.ManagementAPI.URL = ""
		fallback.Spec.AlertAPI.URL = ""
		f.create(fallback)
		fallback = f.waitFor("fallback", 20*time.Second, "Stalled URLNotAllowed",
			conditionIs(swv1.ConditionStalled, metav1.ConditionTrue, swv1.ReasonURLNotAllowed))
		for cond, flag := range map[string]string{swv1.ConditionPipesSynced: "--management-api-url", swv1.ConditionAlertsSynced: "--alert-api-url"} {
			c := meta.FindStatusCondition(fallback.Status.Conditions, cond)
			if c == nil || c.Reason != swv1.ReasonURLNotAllowed || !strings.Contains(c.Message, flag) {
				t.Errorf("%s: %+v, want URLNotAllowed naming %s", cond, c, flag)
			}
		}
	})

	// An allowed URL and the Secrets: Ready, at once (a spec change syncs).
	f.createSecrets()
	w = f.get("elsewhere")
	patch := client.MergeFrom(w.DeepCopy())
	w.Spec.ManagementAPI.URL = f.fake.URL
	w.Spec.AlertAPI.URL = f.fake.URL
	if err := env.Client.Patch(f.ctx, w, patch); err != nil {
		t.Fatal(err)
	}
	w = f.waitFor("elsewhere", 20*time.Second, "Ready at an allowed URL", isReady)
	if meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionStalled) != nil {
		t.Error("Stalled is still present after recovery")
	}
}
