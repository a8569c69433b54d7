package kubectlplugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// maxEvents is how many of a watch's events why shows, the newest: with the
// conditions, what fits one screen.
const maxEvents = 10

// maxRowMessage is the most runes of a message in why's tables, so that one
// long message does not push the rest off the screen; the header shows
// Ready's message whole.
const maxRowMessage = 120

func (p *plugin) whyCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "why NAME",
		Short: "Tell why a ServiceWatch is not Ready or is late, in one screen",
		Long: `why shows, from the ServiceWatch's status and events: Ready and why, when it
last synced and when it syncs next, whether the cloud's rate limit holds it
back (a 429's wait, a shared key's budget), the URLs and Secret names it
uses (never a Secret's values: why reads no Secret), its conditions and its
newest events.`,
		Example: `  kubectl servicewatch why analytics-prod -n data`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return p.why(cmd.Context(), args[0])
		},
	}
}

func (p *plugin) why(ctx context.Context, name string) error {
	c, w, err := p.targetWatch(ctx, name)
	if err != nil {
		return err
	}
	events, eventsErr := listEvents(ctx, c, w)
	now := p.clock.Now()
	// Each part is aligned on its own: kubectl's tab writer keeps the
	// widest column it saw, which would pad the events as the conditions.
	var summary, conds, evs strings.Builder
	writeSummary(&summary, w, now)
	writeConditions(&conds, w, now)
	writeEvents(&evs, events, eventsErr, now)
	for i, part := range []string{summary.String(), conds.String(), evs.String()} {
		if i > 0 {
			part = "\n" + part
		}
		if err := writeAligned(p.streams.Out, part); err != nil {
			return err
		}
	}
	return nil
}

// writeSummary writes the header: one line per question a user asks first.
func writeSummary(out *strings.Builder, w *serviceWatch, now time.Time) {
	linef(out, "ServiceWatch:\t%s/%s\n", w.Namespace, w.Name)
	linef(out, "Ready:\t%s\n", readyLine(w, now))
	linef(out, "Last sync:\t%s\n", timeLine(w.Status.LastSyncTime, now, "never"))
	linef(out, "Next sync:\t%s\n", nextSync(w, now))
	linef(out, "Budget:\t%s\n", budgetState(w, now))
	linef(out, "Sync request:\t%s\n", requestState(w))
	linef(out, "Management API:\t%s\n", apiLine(w.Spec.ManagementAPI.URL, "--management-api-url", w.Spec.ManagementAPI.SecretRef.Name, "keys keyId, keySecret"))
	if a := w.Spec.AlertAPI; a != nil {
		linef(out, "Alert API:\t%s\n", apiLine(a.URL, "--alert-api-url", a.SecretRef.Name, "key token"))
	}
}

// readyLine is Ready's status, reason, age and message.
func readyLine(w *serviceWatch, now time.Time) string {
	ready := meta.FindStatusCondition(w.Status.Conditions, conditionReady)
	if ready == nil {
		return "unknown: the manager has not written a status yet (is it running, and does it watch this namespace?)"
	}
	line := fmt.Sprintf("%s, %s since %s", ready.Status, ready.Reason, relative(ready.LastTransitionTime.Time, now))
	if ready.Message != "" {
		line += ": " + ready.Message
	}
	return line
}

// timeLine is a time as RFC 3339 and relative to now, or none when unset.
func timeLine(t *metav1.Time, now time.Time, none string) string {
	if t == nil {
		return none
	}
	return t.UTC().Format(time.RFC3339) + " (" + relative(t.Time, now) + ")"
}

// relative is t from now in kubectl's words: "5m ago", "in 2m", "now".
func relative(t, now time.Time) string {
	d := now.Sub(t)
	switch {
	case d >= time.Second:
		return duration.HumanDuration(d) + " ago"
	case d <= -time.Second:
		return "in " + duration.HumanDuration(-d)
	}
	return "now"
}

// nextSync says when the manager syncs the watch next, as its status lets
// tell: a sync is due spec.interval after the last (plus a small jitter),
// not before the cloud's wait ends, and at once after a change or request.
func nextSync(w *serviceWatch, now time.Time) string {
	switch {
	case w.Spec.Suspend:
		return "none while suspended (kubectl servicewatch resume " + w.Name + ")"
	case w.Status.ObservedGeneration != w.Generation:
		return fmt.Sprintf("now: generation %d of the spec is not synced yet", w.Generation)
	case requestPending(w):
		return "now: a requested sync waits for the manager"
	case w.Status.LastSyncTime == nil:
		return "as soon as the manager reaches it: it has not reached the cloud yet"
	}
	interval := w.Spec.SyncInterval()
	due := w.Status.LastSyncTime.Add(interval)
	line := fmt.Sprintf("about %s (%s): spec.interval %s after the last sync", due.UTC().Format(time.RFC3339), relative(due, now), interval)
	if held := w.Status.RetryNotBefore; held != nil && held.After(due) {
		line = fmt.Sprintf("not before %s (%s): the cloud asked to wait", held.UTC().Format(time.RFC3339), relative(held.Time, now))
	}
	switch {
	case conditionIs(w, conditionIntervalMet, metav1.ConditionFalse):
		line += "; later while the rate budget is stretched (see Budget)"
	case conditionIs(w, conditionStalled, metav1.ConditionTrue):
		line += "; at once when you fix what Stalled says"
	case !w.IsReady():
		line += "; a failed part is retried sooner, with backoff"
	}
	return line
}

// budgetState says whether the cloud's rate limits hold the watch back:
// a 429's (or 503's) wait in force, a shared key's budget stretching the
// interval, a sync waiting for its turn, or none of these.
func budgetState(w *serviceWatch, now time.Time) string {
	if held := w.Status.RetryNotBefore; held != nil && held.After(now) {
		by := "a 503 with Retry-After"
		if slices.ContainsFunc(w.Status.Conditions, func(c metav1.Condition) bool { return c.Reason == reasonRateLimited }) {
			by = "a 429"
		}
		return fmt.Sprintf("held by %s until %s (%s): no call to the cloud before then", by, held.UTC().Format(time.RFC3339), relative(held.Time, now))
	}
	if c := meta.FindStatusCondition(w.Status.Conditions, conditionIntervalMet); c != nil && c.Status == metav1.ConditionFalse {
		return "stretched: " + c.Message
	}
	if c := meta.FindStatusCondition(w.Status.Conditions, conditionReconciling); c != nil && c.Status == metav1.ConditionTrue {
		return "waiting for its turn: " + c.Message
	}
	return "within budget: syncs every spec.interval"
}

// requestState says whether the last sync asked for with the requested-at
// annotation has been written.
func requestState(w *serviceWatch) string {
	asked := w.Annotations[requestedAtAnnotation]
	switch {
	case asked == "":
		return "none asked (kubectl servicewatch sync " + w.Name + ")"
	case requestPending(w):
		return fmt.Sprintf("%s=%s waits for the manager (last handled: %q)", requestedAtAnnotation, asked, w.Status.LastHandledRequestedAt)
	}
	return fmt.Sprintf("%s=%s handled", requestedAtAnnotation, asked)
}

// requestPending tells a requested-at value that no written sync has
// handled.
func requestPending(w *serviceWatch) bool {
	asked := w.Annotations[requestedAtAnnotation]
	return asked != "" && !echoes(w.Status.LastHandledRequestedAt, asked)
}

// echoes tells whether handled, a status.lastHandledRequestedAt, is the
// manager's echo of the requested-at value asked: the value itself, or its
// SHA-256 for a value it does not copy into status (a long one, or one with
// control characters).
func echoes(handled, asked string) bool {
	if handled == asked {
		return true
	}
	sum := sha256.Sum256([]byte(asked))
	return handled == "sha256:"+hex.EncodeToString(sum[:])
}

// apiLine is where an API is called and which Secret holds its credential:
// the Secret's name and keys, never its values.
func apiLine(url, flag, secret, keys string) string {
	if url == "" {
		url = "the manager's " + flag
	}
	return fmt.Sprintf("%s, credential in Secret %s (%s)", url, secret, keys)
}

// conditionIs tells whether the condition typ is present with status.
func conditionIs(w *serviceWatch, typ string, status metav1.ConditionStatus) bool {
	c := meta.FindStatusCondition(w.Status.Conditions, typ)
	return c != nil && c.Status == status
}

// writeConditions writes every condition, Ready first, then by type.
func writeConditions(out *strings.Builder, w *serviceWatch, now time.Time) {
	conds := slices.Clone(w.Status.Conditions)
	slices.SortStableFunc(conds, func(a, b metav1.Condition) int {
		if (a.Type == conditionReady) != (b.Type == conditionReady) {
			if a.Type == conditionReady {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Type, b.Type)
	})
	out.WriteString("Conditions:\n")
	if len(conds) == 0 {
		out.WriteString("  <none>\n")
		return
	}
	out.WriteString("  TYPE\tSTATUS\tREASON\tSINCE\tMESSAGE\n")
	for _, c := range conds {
		linef(out, "  %s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, cell(c.Reason), relative(c.LastTransitionTime.Time, now), cell(cut(escapeTerminal(c.Message))))
	}
}

// listEvents reads the events about w, newest last, at most maxEvents.
func listEvents(ctx context.Context, c client.Reader, w *serviceWatch) ([]corev1.Event, error) {
	list := &corev1.EventList{}
	if err := c.List(ctx, list, client.InNamespace(w.Namespace),
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("involvedObject.uid", string(w.UID))}); err != nil {
		return nil, fmt.Errorf("listing the events of %s/%s: %w", w.Namespace, w.Name, err)
	}
	events := list.Items
	slices.SortStableFunc(events, func(a, b corev1.Event) int { return eventTime(&a).Compare(eventTime(&b)) })
	return events[max(0, len(events)-maxEvents):], nil
}

// eventTime is when an event last happened, whichever API wrote it.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// eventCount is how many times an event happened.
func eventCount(e *corev1.Event) int32 {
	if e.Series != nil {
		return e.Series.Count
	}
	return max(e.Count, 1)
}

// writeEvents writes the newest events, or why there are none to show: a
// user without the right to list events still gets the rest of the report.
func writeEvents(out *strings.Builder, events []corev1.Event, err error, now time.Time) {
	linef(out, "Events (newest %d):\n", maxEvents)
	switch {
	case err != nil:
		linef(out, "  cannot be shown: %s\n", err)
		return
	case len(events) == 0:
		out.WriteString("  <none> (events expire after an hour by default)\n")
		return
	}
	out.WriteString("  LAST SEEN\tTYPE\tREASON\tCOUNT\tMESSAGE\n")
	for i := range events {
		e := &events[i]
		linef(out, "  %s\t%s\t%s\t%d\t%s\n", relative(eventTime(e), now), e.Type, e.Reason, eventCount(e), cell(cut(escapeTerminal(e.Message))))
	}
}

// cut shortens s, an escaped message, to maxRowMessage runes, saying it
// did.
func cut(s string) string {
	r := []rune(s)
	if len(r) <= maxRowMessage {
		return s
	}
	return string(r[:maxRowMessage-1]) + "…"
}
