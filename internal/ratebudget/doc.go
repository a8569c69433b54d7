// Package ratebudget is the client-side rate budgets of the cloud APIs:
// how many calls one credential may make at one API host, and the hold a
// 429 puts on them.
//
// One [Store] serves two callers. The controller asks it before a sync
// ([Store.Admit]): a budget keeps to its [RateLimit] over a window stretched
// by a margin (Per × 1.1: the service's windows have a phase we do not know,
// and latency varies), and spaces admissions evenly, window/Requests apart,
// with small bursts, so that all the watches sharing a key stay under the
// service's limit together and a backlog is spread out rather than fired at
// once. The cloud client asks it before each call ([Store.HeldUntil]) and
// tells it of a 429 ([Store.Hold], [RetryAfter]): until the wait the service
// asked for is over, no call of that budget goes out and Admit says the wait
// too.
//
// A store may keep a reserved share of every budget for the key's users
// outside the manager (NewReservingStore: a Terraform run, a scraper): it
// then admits only the rest, and tells of a 429 whether the manager had
// kept under its part (RateLimited: CauseOthers) or not (CauseManager).
//
// Budgets are keyed by a SHA-256 digest of the API, the host (see
// egress.HostKey) and the credential's digest, never by the credential
// itself ([BudgetID]); [Fingerprint] gives a short form for metrics labels.
// Budgets that are as good as new (no hold, nothing left in their window) are
// forgotten, so that rotated credentials do not accumulate.
//
// It is separate from the cloud client because pacing is not calling: its
// rules are table tests on an injected clock, with no HTTP server, and the
// controller reaches it through an interface of its own rather than through
// the client that reads the cloud's data.
package ratebudget
