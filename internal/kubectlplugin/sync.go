package kubectlplugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// defaultSyncTimeout is how long sync --wait waits when --timeout is not
// given: longer than a sync's cloud calls take, shorter than a 429's wait.
const defaultSyncTimeout = 5 * time.Minute

// errSyncFailed: the requested sync was handled, and Ready is not True.
var errSyncFailed = errors.New("the sync failed")

// errTimedOut: the manager did not handle the requested sync in time.
var errTimedOut = errors.New("timed out")

func (p *plugin) syncCommand() *cobra.Command {
	var wait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "sync NAME",
		Short: "Ask a ServiceWatch for a sync now, and with --wait wait until that sync is written",
		Long: `sync sets the annotation ` + requestedAtAnnotation + ` of the ServiceWatch to a new
token. The manager syncs the watch and then echoes the token in
status.lastHandledRequestedAt, in the same write as the sync's conditions.

With --wait, sync returns only when status.lastHandledRequestedAt is this
token (a Ready written before the request is never taken for the answer),
prints Ready's status and message, and exits 1 when Ready is not True or
when --timeout passes first.`,
		Example: `  kubectl servicewatch sync analytics-prod -n data --wait --timeout 2m`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return p.sync(cmd.Context(), args[0], wait, timeout)
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the manager has handled this sync, and fail when it failed")
	cmd.Flags().DurationVar(&timeout, "timeout", defaultSyncTimeout, "with --wait, how long to wait (a Go duration: 30s, 2m)")
	return cmd
}

// sync requests a sync of the watch name, and with wait waits for it.
func (p *plugin) sync(ctx context.Context, name string, wait bool, timeout time.Duration) error {
	c, key, err := p.target(name)
	if err != nil {
		return err
	}
	w, err := getWatch(ctx, c, key)
	if err != nil {
		return err
	}
	token := newToken(p.clock.Now(), w)
	if err := requestSync(ctx, c, w, token); err != nil {
		return err
	}
	out := p.streams.Out
	if err := printf(out, "%s/%s sync requested: %s=%s\n", resourceName, name, requestedAtAnnotation, token); err != nil {
		return err
	}
	if w.Spec.Suspend {
		_ = printf(p.streams.ErrOut, "warning: %s/%s is suspended: the manager acknowledges the request without calling the cloud\n", resourceName, name)
	}
	if !wait {
		return printf(out, "wait for it with: kubectl wait -n %s servicewatch/%s --for=jsonpath='{.status.lastHandledRequestedAt}'=%s\n", key.Namespace, name, token)
	}
	handled, err := waitForToken(ctx, c, p.clock, w, token, timeout)
	if err != nil {
		return err
	}
	return reportSync(out, handled)
}

// newToken is a requested-at value that neither the annotation nor the
// echo holds already, so that the manager sees a new request and its answer
// cannot be an old one: the time, with a counter when the clock repeats.
func newToken(now time.Time, w *serviceWatch) string {
	base := now.UTC().Format(time.RFC3339Nano)
	token := base
	for i := 2; token == w.Annotations[requestedAtAnnotation] || token == w.Status.LastHandledRequestedAt; i++ {
		token = base + "-" + strconv.Itoa(i)
	}
	return token
}

// requestSync sets the requested-at annotation to token with a merge patch,
// leaving every other annotation as it is; w becomes the patched watch.
func requestSync(ctx context.Context, c client.Client, w *serviceWatch, token string) error {
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{requestedAtAnnotation: token}},
	})
	if err != nil {
		return fmt.Errorf("building the annotation patch: %w", err)
	}
	if err := c.Patch(ctx, w, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("requesting a sync of %s/%s: %w", w.Namespace, w.Name, err)
	}
	return nil
}

// tokenWait is one wait for the echo of a requested sync.
type tokenWait struct {
	c     client.WithWatch
	key   client.ObjectKey
	token string
	// later are requested-at values set by someone else after token: the
	// manager handles the newest value only, and a sync that handles a
	// later request also answers this one.
	later map[string]bool
	// expired fires when the wait is over.
	expired <-chan time.Time
}

// waitForToken watches the watch w until its status echoes token (or a
// request made after it), and returns the watch as that write left it. It
// fails when timeout passes first on clk, when the watch is deleted, or
// when ctx ends.
func waitForToken(ctx context.Context, c client.WithWatch, clk clock.WithTicker, w *serviceWatch, token string, timeout time.Duration) (*serviceWatch, error) {
	timer := clk.NewTimer(timeout)
	defer timer.Stop()
	tw := &tokenWait{c: c, key: client.ObjectKeyFromObject(w), token: token, later: map[string]bool{}, expired: timer.C()}
	for {
		if tw.answered(w) {
			return w, nil
		}
		next, err := tw.follow(ctx, w.ResourceVersion)
		if errors.Is(err, errTimedOut) {
			return nil, fmt.Errorf("%w after %s waiting for the manager to handle the sync %s=%s of %s/%s (status.lastHandledRequestedAt is %q): is the manager running? kubectl servicewatch why %s -n %s tells more",
				errTimedOut, timeout, requestedAtAnnotation, token, tw.key.Namespace, tw.key.Name, w.Status.LastHandledRequestedAt, tw.key.Name, tw.key.Namespace)
		}
		if err != nil {
			return nil, err
		}
		w = next
	}
}

// answered tells whether w's status is the write of a sync requested no
// earlier than token, noting requests that others made meanwhile.
func (tw *tokenWait) answered(w *serviceWatch) bool {
	if v := w.Annotations[requestedAtAnnotation]; v != tw.token && v != "" {
		tw.later[v] = true
	}
	handled := w.Status.LastHandledRequestedAt
	return handled == tw.token || tw.later[handled]
}

// follow watches the watch from resourceVersion and returns it at its first
// change that answers the request, or at the end of the API server's watch
// (a new one then starts from the last version seen).
func (tw *tokenWait) follow(ctx context.Context, resourceVersion string) (*serviceWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := tw.c.Watch(ctx, &serviceWatchList{}, &client.ListOptions{
		Namespace:     tw.key.Namespace,
		FieldSelector: fields.OneTermEqualSelector("metadata.name", tw.key.Name),
		Raw:           &metav1.ListOptions{ResourceVersion: resourceVersion},
	})
	if err != nil {
		return nil, fmt.Errorf("watching %s/%s: %w", tw.key.Namespace, tw.key.Name, err)
	}
	defer events.Stop()
	last := resourceVersion
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the sync of %s/%s: %w", tw.key.Namespace, tw.key.Name, ctx.Err())
		case <-tw.expired:
			return nil, errTimedOut
		case ev, open := <-events.ResultChan():
			if !open {
				return tw.reread(ctx, last)
			}
			w, err := tw.seen(ctx, ev)
			if err != nil {
				return nil, err
			}
			if w == nil {
				continue
			}
			if tw.answered(w) {
				return w, nil
			}
			last = w.ResourceVersion
		}
	}
}

// seen turns one watch event into the watch it shows: nil with no error
// for an event to skip, and the watch read again when the API server ended
// the watch with an error (such as a resourceVersion too old).
func (tw *tokenWait) seen(ctx context.Context, ev watch.Event) (*serviceWatch, error) {
	switch ev.Type {
	case watch.Deleted:
		return nil, fmt.Errorf("%s/%s was deleted while waiting for its sync", tw.key.Namespace, tw.key.Name)
	case watch.Error:
		return getWatch(ctx, tw.c, tw.key)
	case watch.Added, watch.Modified:
		if w, ok := ev.Object.(*serviceWatch); ok {
			return w, nil
		}
	}
	return nil, nil
}

// reread reads the watch again after the API server closed a watch, so
// that the next watch starts from a version the server still has.
func (tw *tokenWait) reread(ctx context.Context, last string) (*serviceWatch, error) {
	w, err := getWatch(ctx, tw.c, tw.key)
	if err != nil {
		return nil, err
	}
	if w.ResourceVersion == "" {
		w.ResourceVersion = last
	}
	return w, nil
}

// reportSync prints Ready as the handled sync left it, and fails when it is
// not True.
func reportSync(out io.Writer, w *serviceWatch) error {
	ready := meta.FindStatusCondition(w.Status.Conditions, conditionReady)
	if ready == nil {
		if err := printf(out, "%s/%s sync handled: no Ready condition\n", resourceName, w.Name); err != nil {
			return err
		}
		return fmt.Errorf("%w: %s/%s has no Ready condition", errSyncFailed, w.Namespace, w.Name)
	}
	if err := printf(out, "%s/%s sync handled: Ready=%s (%s): %s\n", resourceName, w.Name, ready.Status, ready.Reason, ready.Message); err != nil {
		return err
	}
	if ready.Status != metav1.ConditionTrue {
		return fmt.Errorf("%w: %s/%s is not Ready (%s)", errSyncFailed, w.Namespace, w.Name, ready.Reason)
	}
	return nil
}
