package controller

import (
	"fmt"
	"math"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/conditions"
)

// budgetBook knows, for each cloud budget (an API key or token at one API
// host, named by a fingerprint), what the watches that use it ask of it. When
// they ask for more calls than the budget allows, each one's interval is
// stretched by the same factor, so that they share the budget in proportion
// to what they asked, stay Ready, and the client never has to refuse a call.
//
// A read that several watches make together is made once (sharedReads), so it
// is asked for once: ten watches of one service at 30 s ask two calls per
// 30 s of their key, not twenty.
type budgetBook struct {
	mu      sync.Mutex
	budgets map[string]*budgetUse
	of      map[types.NamespacedName][]heldAsk
}

// budgetUse is what the watches on one budget ask of it.
type budgetUse struct {
	// api is the API the budget is of, for the metrics.
	api string
	// allowed is the calls per second the budget allows.
	allowed float64
	// asks are the reads the watches make of the budget, each with the
	// watches that make it together.
	asks map[sharedAsk]map[types.NamespacedName]bool
}

// sharedAsk is one read made once per interval by every watch that makes it
// at the same moments: those of one phase group (the same interval and the
// same read hash sync together, see phaseBook). Watches that make the same
// read at other moments make it again, so they ask for it again.
type sharedAsk struct {
	read  readKey
	every time.Duration
	group uint64
}

// heldAsk is an ask of one watch, to forget it.
type heldAsk struct {
	fingerprint string
	ask         sharedAsk
}

// budgetDemand is a watch's share of one budget.
type budgetDemand struct {
	// api is the API the budget is of, for the metrics.
	api string
	// fingerprint names the budget, never the credential.
	fingerprint string
	// allowed is the calls per second the budget allows.
	allowed float64
	// reads are the calls of this budget one sync makes.
	reads []readKey
}

func newBudgetBook() *budgetBook {
	return &budgetBook{budgets: map[string]*budgetUse{}, of: map[types.NamespacedName][]heldAsk{}}
}

// note records what the watch, of phase group group, asks of its budgets at
// interval every, and returns the factor its interval must be stretched by to
// fit all of them (1 when they all fit).
func (b *budgetBook) note(key types.NamespacedName, every time.Duration, group uint64, demands []budgetDemand) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removeLocked(key)
	factor := 1.0
	for _, d := range demands {
		if len(d.reads) == 0 || d.allowed <= 0 {
			continue
		}
		use := b.budgets[d.fingerprint]
		if use == nil {
			use = &budgetUse{asks: map[sharedAsk]map[types.NamespacedName]bool{}}
			b.budgets[d.fingerprint] = use
		}
		use.api, use.allowed = d.api, d.allowed
		for _, read := range d.reads {
			ask := sharedAsk{read: read, every: every, group: group}
			if use.asks[ask] == nil {
				use.asks[ask] = map[types.NamespacedName]bool{}
			}
			use.asks[ask][key] = true
			b.of[key] = append(b.of[key], heldAsk{fingerprint: d.fingerprint, ask: ask})
		}
		factor = max(factor, use.ratio())
	}
	return factor
}

// ratio is the calls per second asked divided by those allowed.
func (u *budgetUse) ratio() float64 {
	total := 0.0
	for ask := range u.asks {
		total += 1 / ask.every.Seconds()
	}
	return total / u.allowed
}

// budgetRatio is one budget's demand ratio and the API it is of.
type budgetRatio struct {
	api   string
	ratio float64
}

// ratios returns each budget's demand ratio by fingerprint, for the metrics:
// a budget no watch uses any more is not in it.
func (b *budgetBook) ratios() map[string]budgetRatio {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]budgetRatio, len(b.budgets))
	for fp, use := range b.budgets {
		if use.allowed > 0 {
			out[fp] = budgetRatio{api: use.api, ratio: use.ratio()}
		}
	}
	return out
}

// forget removes a deleted watch from its budgets.
func (b *budgetBook) forget(key types.NamespacedName) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removeLocked(key)
}

func (b *budgetBook) removeLocked(key types.NamespacedName) {
	for _, held := range b.of[key] {
		use := b.budgets[held.fingerprint]
		if use == nil {
			continue
		}
		if watches := use.asks[held.ask]; watches != nil {
			delete(watches, key)
			if len(watches) == 0 {
				delete(use.asks, held.ask)
			}
		}
		if len(use.asks) == 0 {
			delete(b.budgets, held.fingerprint)
		}
	}
	delete(b.of, key)
}

// stretched is the interval that fits the budget: every times factor, rounded
// up to a whole second so that small changes of demand do not change it, and
// at most maxEffectiveInterval.
func stretched(every time.Duration, factor float64) time.Duration {
	if factor <= 1 {
		return every
	}
	seconds := math.Ceil(every.Seconds() * factor)
	if !(seconds < maxEffectiveInterval.Seconds()) { // NaN too
		return maxEffectiveInterval
	}
	return time.Duration(seconds) * time.Second
}

// setIntervalMetCondition says, while the budget stretches the watch's
// interval, by how much; absent when the interval is met.
func setIntervalMetCondition(watch *swv1.ServiceWatch, effective time.Duration) {
	every := interval(watch)
	if effective <= every {
		conditions.Delete(watch, swv1.ConditionIntervalMet)
		return
	}
	setCondition(watch, metav1.Condition{Type: swv1.ConditionIntervalMet, Status: metav1.ConditionFalse, Reason: swv1.ReasonBudgetExceeded,
		Message: fmt.Sprintf("syncing every %s instead of every %s: the watches sharing this API key or token ask for more calls than its rate budget allows; data is as fresh as the budget allows",
			effective, every)})
}
