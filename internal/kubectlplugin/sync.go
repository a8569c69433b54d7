package kubectlplugin

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	c, w, err := p.targetWatch(ctx, name)
	if err != nil {
		return err
	}
	token, err := newToken(p.clock.Now(), p.random, w)
	if err != nil {
		return err
	}
	before := []string{w.Annotations[requestedAtAnnotation], w.Status.LastHandledRequestedAt}
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
		return printf(out, "wait for it with: kubectl wait -n %s servicewatch/%s --for=jsonpath='{.status.lastHandledRequestedAt}'=%s\n", w.Namespace, name, token)
	}
	tw := newTokenWait(c, w, token, append(before, w.Status.LastHandledRequestedAt), p.streams.ErrOut)
	handled, err := tw.wait(ctx, p.clock, w, timeout)
	if err != nil {
		return err
	}
	return reportSync(out, handled)
}

// newToken is a requested-at value of this request only: the time, to
// read, and a random suffix, so that no other request (another user's at the
// same instant, a value a GitOps tool keeps) holds the same one; and never
// the value the annotation or the echo holds already, so that the manager
// sees a new request.
func newToken(now time.Time, random io.Reader, w *serviceWatch) (string, error) {
	for range 3 { // a value that repeats three times is no random source
		var b [tokenRandomBytes]byte
		if _, err := io.ReadFull(random, b[:]); err != nil {
			return "", fmt.Errorf("making a unique request value: %w", err)
		}
		token := now.UTC().Format(time.RFC3339Nano) + "-" + hex.EncodeToString(b[:])
		if token != w.Annotations[requestedAtAnnotation] && token != w.Status.LastHandledRequestedAt {
			return token, nil
		}
	}
	return "", errors.New("making a unique request value: the random source repeats itself")
}

// tokenRandomBytes is the random part of a request value: 64 bits, and the
// value stays far below the length the manager echoes as it is (256).
const tokenRandomBytes = 8

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
	// stale are the requested-at values that the annotation and the echo
	// held before token was written (and the echo as the patch left it):
	// another writer setting one of them back (a GitOps tool restoring its
	// manifest, a script) asks for no new sync, and their echo answers
	// nothing.
	stale map[string]bool
	// later are requested-at values set by someone else after token, seen
	// waiting for the manager: it handles the newest value only, and a sync
	// that handles a later request also answers this one.
	later map[string]bool
	// warnings is where a request set aside by another writer is told, once.
	warnings io.Writer
	warned   bool
	// expired fires when the wait is over.
	expired <-chan time.Time
}

// newTokenWait is the wait for the echo of token, written on the watch w;
// stale are the values that cannot answer it (see tokenWait.stale).
func newTokenWait(c client.WithWatch, w *serviceWatch, token string, stale []string, warnings io.Writer) *tokenWait {
	tw := &tokenWait{c: c, key: client.ObjectKeyFromObject(w), token: token, stale: map[string]bool{}, later: map[string]bool{}, warnings: warnings}
	for _, v := range stale {
		if v != "" {
			tw.stale[v] = true
		}
	}
	return tw
}

// wait watches the watch w until its status echoes the token (or a request
// made after it), and returns the watch as that write left it. It fails
// when timeout passes first on clk, when the watch is deleted, or when ctx
// ends.
func (tw *tokenWait) wait(ctx context.Context, clk clock.WithTicker, w *serviceWatch, timeout time.Duration) (*serviceWatch, error) {
	timer := clk.NewTimer(timeout)
	defer timer.Stop()
	tw.expired = timer.C()
	for {
		if tw.answered(w) {
			return w, nil
		}
		next, err := tw.follow(ctx, w.ResourceVersion)
		if errors.Is(err, errTimedOut) {
			return nil, fmt.Errorf("%w after %s waiting for the manager to handle the sync %s=%s of %s/%s (status.lastHandledRequestedAt is %q): is the manager running? kubectl servicewatch why %s -n %s tells more",
				errTimedOut, timeout, requestedAtAnnotation, tw.token, tw.key.Namespace, tw.key.Name, w.Status.LastHandledRequestedAt, tw.key.Name, tw.key.Namespace)
		}
		if err != nil {
			return nil, err
		}
		w = next
	}
}

// answered tells whether w's status is the write of a sync requested no
// earlier than token, noting requests that others made meanwhile: a value
// counts only when it was new (not stale) and still waiting for the manager
// when seen, so that the echo of a sync made before token never answers it.
func (tw *tokenWait) answered(w *serviceWatch) bool {
	asked, handled := w.Annotations[requestedAtAnnotation], w.Status.LastHandledRequestedAt
	if handled == tw.token || tw.later[handled] {
		return true
	}
	switch {
	case asked == tw.token:
	case asked == "" || tw.stale[asked]:
		tw.setAside(asked)
	case !echoes(handled, asked):
		tw.later[asked] = true
	}
	return false
}

// setAside warns, once, that another writer replaced token with a value
// that asks the manager for nothing new: unless it handled token first,
// this wait ends at its timeout.
func (tw *tokenWait) setAside(asked string) {
	if tw.warned {
		return
	}
	tw.warned = true
	what := fmt.Sprintf("set %s back to %q, a request made before this one", requestedAtAnnotation, asked)
	if asked == "" {
		what = "removed " + requestedAtAnnotation
	}
	_ = printf(tw.warnings, "warning: another writer %s (a GitOps tool restoring the manifest?): the manager may never handle this sync, and its earlier answer is not taken for it\n", what)
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
	if !w.IsReady() {
		return fmt.Errorf("%w: %s/%s is not Ready (%s)", errSyncFailed, w.Namespace, w.Name, ready.Reason)
	}
	return nil
}
