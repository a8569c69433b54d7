package fairqueue

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/servicewatch/servicewatch/internal/pacing"
)

// No level starves the ones below it (issue 27). A namespace's Secret change
// puts at most SecretShare of its watches ahead of another namespace's
// periodic refresh; a periodic refresh that has waited AgeAfter behind any
// amount of user or Secret work is served next but for at most one item of
// each other namespace (the one at the head of its turn); and aging keeps
// the turns, so another namespace's new watch is not put behind an aged
// burst. With aging and the share off, the queue is the strict one of
// before, which served the periodic refresh last.
//
// Steps: "add ns/name level" adds an item to be served now at a level
// (user, secret or periodic: the initial list's and the read's end of a
// periodic sync), "later ns/name level d" adds one for d after the start (a
// requeue), "serve n" takes n items, "unpark d" and "age d" unpark and age
// the items at d after the start; then the rest is served.
func TestQueueServesEveryLevelInBoundedTime(t *testing.T) {
	burst := func(ns, level string, n int) []string {
		var steps []string
		for i := range n {
			steps = append(steps, "add "+ns+"/"+string(rune('a'+i))+" "+level)
		}
		return steps
	}
	cases := []struct {
		name  string
		opts  Options
		steps []string
		want  string
	}{{
		name:  "a Secret's fan-out: SecretShare ahead of another's periodic refresh",
		steps: append(burst("busy", "secret", 6), "add victim/refresh periodic"),
		want:  "a b c refresh d e f",
	}, {
		name:  "the strict queue of before: the periodic refresh waits for the whole fan-out",
		opts:  Options{AgeAfter: -1, SecretShare: -1},
		steps: append(burst("busy", "secret", 6), "add victim/refresh periodic"),
		want:  "a b c d e f refresh",
	}, {
		name:  "user work: the periodic refresh waits until it ages",
		steps: append(burst("busy", "user", 6), "add victim/refresh periodic", "serve 2", "age 4.999s"),
		want:  "a b c d e f refresh",
	}, {
		name:  "user work: aged, the periodic refresh is served next",
		steps: append(burst("busy", "user", 6), "add victim/refresh periodic", "serve 2", "age 5s"),
		want:  "a b refresh c d e f",
	}, {
		name:  "user work, without aging: the periodic refresh is served last",
		opts:  Options{AgeAfter: -1},
		steps: append(burst("busy", "user", 6), "add victim/refresh periodic", "serve 2", "age 1h"),
		want:  "a b c d e f refresh",
	}, {
		name: "aged behind three busy namespaces: one item of each goes first",
		steps: slices.Concat(burst("one", "user", 3), burst("two", "user", 3), burst("three", "user", 3),
			[]string{"add victim/refresh periodic", "age 10s"}),
		want: "a a a refresh b b b c c c",
	}, {
		name: "aged, it is not overtaken by what the others add after it",
		steps: append(burst("one", "user", 3), "add victim/refresh periodic", "age 5s",
			"add one/x user", "add two/y user"),
		want: "a refresh y b c x",
	}, {
		name:  "a Secret's fan-out ages with its turns: another namespace's new watch is not behind it",
		steps: append(burst("busy", "secret", 6), "age 5s", "add other/new user"),
		want:  "a new b c d e f",
	}, {
		name:  "items that age together are served in the order they became ready, each at its turn",
		steps: []string{"add busy/a user", "add busy/b user", "add first/x periodic", "age 1s", "add second/y periodic", "age 6s"},
		want:  "a x y b",
	}, {
		name: "requeues take their turn when they are ready, not the priority they were served at",
		steps: []string{"later busy/a user 1s", "later busy/b user 1s", "later busy/c user 1s", "add victim/refresh periodic",
			"unpark 1s", "age 5s"},
		want: "a refresh b c",
	}, {
		name:  "a parked item added now is served now, at the higher of its levels, and once",
		steps: []string{"later busy/a user 1h", "add busy/a secret", "add busy/b user", "unpark 2h"},
		want:  "a b",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
			now := start
			tc.opts.Now = func() time.Time { return now }
			q := newFairQueue("test", nil, tc.opts)
			defer q.ShutDown()
			var served []string
			serve := func(n int) (names []string) {
				for range n {
					item, _, _ := q.GetWithPriority()
					q.Done(item)
					served = append(served, item.Name)
					names = append(names, item.String())
				}
				return names
			}
			queued := map[string]bool{} // priorityqueue holds an item once
			added := func(ns, name string) { queued[ns+"/"+name] = true }
			for _, s := range tc.steps {
				f := strings.Fields(s)
				switch f[0] {
				case "add":
					ns, name, _ := strings.Cut(f[1], "/")
					priority := PriorityOf(map[string]pacing.Level{"user": pacing.User, "secret": pacing.Secret, "periodic": pacing.Periodic}[f[2]])
					q.AddWithOpts(priorityqueue.AddOpts{Priority: &priority},
						reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
					added(ns, name)
				case "later":
					ns, name, _ := strings.Cut(f[1], "/")
					priority := PriorityOf(map[string]pacing.Level{"user": pacing.User, "secret": pacing.Secret, "periodic": pacing.Periodic}[f[2]])
					after, err := time.ParseDuration(f[3])
					if err != nil {
						t.Fatal(err)
					}
					q.AddWithOpts(priorityqueue.AddOpts{Priority: &priority, After: after},
						reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
					added(ns, name)
				case "unpark":
					d, err := time.ParseDuration(f[1])
					if err != nil {
						t.Fatal(err)
					}
					now = start.Add(d)
					q.unpark(now)
				case "serve":
					n := int(f[1][0] - '0')
					for _, name := range serve(n) {
						delete(queued, name)
					}
				case "age":
					d, err := time.ParseDuration(f[1])
					if err != nil {
						t.Fatal(err)
					}
					now = start.Add(d)
					q.age(now)
				}
			}
			serve(len(queued))
			if n, held := q.Len(), len(q.waiting); n > 0 || held > 0 {
				t.Errorf("%d items left ready and %d held after serving %v", n, held, served)
			}
			if got := strings.Join(served, " "); got != tc.want {
				t.Errorf("served %q, want %q", got, tc.want)
			}
		})
	}
}
