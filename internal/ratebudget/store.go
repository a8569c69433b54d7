package ratebudget

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"maps"
	"math"
	"sync"
	"time"

	"github.com/servicewatch/servicewatch/internal/egress"
	"github.com/servicewatch/servicewatch/internal/tenancy"
)

// Store holds the budgets of one process: the controller asks it before a
// sync (Admit), and the cloud client asks it before each call (HeldUntil) and
// tells it of a 429 (RateLimited). It is safe for concurrent use.
type Store struct {
	// limits are what the manager keeps to: the key's limits less the
	// reserve; full are the key's limits.
	limits, full map[string]RateLimit
	now          func() time.Time

	// One mutex guards the rest: each operation is a few comparisons, and a
	// single lock means a sweep can never drop a budget in use.
	mu        sync.Mutex
	budgets   map[budgetKey]*budget
	lastSweep time.Time
	// cohorts are the budgets of each limit created together (see
	// phaseFor).
	cohorts map[RateLimit]cohort
	// reserves are the budgets whose reserve is their own (a cloud
	// account's), not the store's: the limit each keeps to.
	reserves map[budgetKey]RateLimit
	// apiOf is the API of each budget in reserves.
	apiOf map[budgetKey]string
}

// NewStore returns a Store whose budgets of each API keep to its limit in
// limits, by API name; an API without a limit, or whose limit has
// Requests <= 0, is only held back by holds.
func NewStore(limits map[string]RateLimit) *Store {
	return NewReservingStore(limits, 0)
}

// NewReservingStore is NewStore keeping reserved of each budget (a share in
// [0, 1), see tenancy.ValidateReserve) for callers outside the manager: a
// Terraform run, a scraper using the same key. The manager keeps to the
// rest (tenancy.Usable: at least one call per window), and its admissions
// and Allowance say so.
func NewReservingStore(limits map[string]RateLimit, reserved float64) *Store {
	usable := make(map[string]RateLimit, len(limits))
	for api, l := range limits {
		usable[api] = reserving(l, reserved)
	}
	return &Store{limits: usable, full: maps.Clone(limits), now: time.Now}
}

// NewStoreAt is NewReservingStore reading the time from now instead of the
// machine's clock, so that a simulation on a fake clock keeps to the very
// budgets the manager keeps to.
func NewStoreAt(limits map[string]RateLimit, reserved float64, now func() time.Time) *Store {
	s := NewReservingStore(limits, reserved)
	s.now = now
	return s
}

// reserving is l less reserved of its calls (see tenancy.Usable).
func reserving(l RateLimit, reserved float64) RateLimit {
	if l.enabled() {
		l.Requests = tenancy.Usable(l.Requests, reserved)
		l.Burst = min(l.Burst, l.Requests)
	}
	return l
}

// SetReserve makes reserved (a share in [0, 1), see tenancy.ValidateReserve) the
// reserve of one budget, api with cred at baseURL, in place of the store's:
// a cloud account's reserve for the key's callers outside the cluster. The
// budget keeps its hold, and what it admitted in the window under way
// counts against the new limit.
func (s *Store) SetReserve(api, baseURL string, cred CredentialID, reserved float64) {
	key, limit := budgetKeyOf(api, baseURL, cred), reserving(s.full[api], reserved)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reserves == nil {
		s.reserves, s.apiOf = map[budgetKey]RateLimit{}, map[budgetKey]string{}
	}
	s.apiOf[key] = api
	if before, ok := s.reserves[key]; ok && before == limit {
		return
	}
	s.reserves[key] = limit
	s.retune(key, limit)
}

// ClearReserve gives the budget back the store's reserve (its account is
// gone).
func (s *Store) ClearReserve(api, baseURL string, cred CredentialID) {
	key := budgetKeyOf(api, baseURL, cred)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.reserves[key]; !ok {
		return
	}
	delete(s.reserves, key)
	delete(s.apiOf, key)
	s.retune(key, s.limits[api])
}

// retune makes key's budget, if it has one, keep to limit, counting what it
// admitted before. Callers hold s.mu.
func (s *Store) retune(key budgetKey, limit RateLimit) {
	b, ok := s.budgets[key]
	switch {
	case !ok:
	case !limit.enabled():
		b.limiter = nil
	case b.limiter == nil:
		b.limiter = newRateLimiter(limit, s.now(), 0)
	default:
		b.limiter = b.limiter.retuned(limit, s.now())
	}
}

// limitOf is what the budget keeps to: its own reserve's limit, else the
// store's for api. Callers hold s.mu.
func (s *Store) limitOf(key budgetKey, api string) RateLimit {
	if l, ok := s.reserves[key]; ok {
		return l
	}
	return s.limits[api]
}

// Admit reserves n calls of api with cred at baseURL when the budget and any
// hold allow all n now, and returns 0. Otherwise it reserves nothing and
// returns how long to wait before asking again (never 0).
//
// The budget is api's RateLimit, shared by every caller that uses the same
// credential at the same API host. Calls themselves never wait: a caller that
// sends without admission is not paced, only held back after a 429. n larger
// than the limit's Requests is never admitted (the wait is one window): split
// such a batch (see MaxBatch).
func (s *Store) Admit(api, baseURL string, cred CredentialID, n int) time.Duration {
	return s.admit(budgetKeyOf(api, baseURL, cred), api, s.now(), n)
}

// Hold records that no call of api with cred at baseURL may go out before
// until, as a 429's Retry-After asks: the cloud client calls it on a 429, and
// the controller to restore a hold it persisted before a restart.
//
// A hold never shortens an earlier one, and is capped at MaxHold from now,
// like a Retry-After, so that a clock gone wrong cannot block a credential
// for good.
func (s *Store) Hold(api, baseURL string, cred CredentialID, until time.Time) {
	now := s.now()
	if latest := now.Add(MaxHold); until.After(latest) {
		until = latest
	}
	s.hold(budgetKeyOf(api, baseURL, cred), api, now, until)
}

// The causes of a 429 (RateLimited), as the metrics label them.
const (
	// CauseOthers: the manager kept under its part of the key's budget
	// when the service answered 429, so other users of the key (or of
	// the reserve) made the calls that filled it.
	CauseOthers = "others"
	// CauseManager: the manager does not pace that budget (its limit is
	// disabled) or had admitted more than its part in the last window.
	CauseManager = "manager"
)

// RateLimited records a 429 of api with cred at baseURL: a hold until
// until, as Hold, and whose calls filled the key's budget: CauseOthers
// when the manager admitted no more than its part over the service's last
// window, else CauseManager.
func (s *Store) RateLimited(api, baseURL string, cred CredentialID, until time.Time) string {
	s.Hold(api, baseURL, cred, until)
	key := budgetKeyOf(api, baseURL, cred)
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.budgets[key]
	if b == nil || b.limiter == nil || b.limiter.admittedSince(s.now().Add(-s.full[api].Per)) > s.limitOf(key, api).Requests {
		return CauseManager
	}
	return CauseOthers
}

// HeldUntil returns the end of the hold of api with cred at baseURL, or the
// zero time when there is none now.
func (s *Store) HeldUntil(api, baseURL string, cred CredentialID) time.Time {
	return s.heldUntil(budgetKeyOf(api, baseURL, cred), s.now())
}

// budget is what the store remembers about one credential on one API host:
// its rate limiter and the hold of the last 429.
type budget struct {
	limiter   *rateLimiter // nil when the limit is disabled
	holdUntil time.Time
}

// cohort is budgets of one limit created one after another, each within a
// burst's spacing of the one before: first, when the latest was, and how
// many joined after the first.
type cohort struct {
	first  *budget
	latest time.Time
	joined int
}

// sweepEvery is how often rested budgets are forgotten; forgetting one
// changes nothing, so this only bounds the work and the memory.
const sweepEvery = time.Minute

// get returns the budget for key of api, creating it with its limit.
// Callers hold s.mu.
func (s *Store) get(key budgetKey, api string, now time.Time) *budget {
	if s.budgets == nil {
		s.budgets = map[budgetKey]*budget{}
	}
	if now.Sub(s.lastSweep) >= sweepEvery {
		s.sweep(now)
	}
	b, ok := s.budgets[key]
	if !ok {
		b = &budget{}
		if limit := s.limitOf(key, api); limit.enabled() {
			b.limiter = newRateLimiter(limit, now, s.phaseFor(limit, b, now))
		}
		s.budgets[key] = b
	}
	return b
}

// phaseFor is the phase of the refills of budget b (see newRateLimiter),
// created at now with limit: 0 (rested) unless b joins a cohort whose first
// budget is exhausted already, then the k-th to join gets k times the
// golden ratio, modulo 1: whatever their number, the phases of a cohort
// stay evenly spread (shares drawn from the budgets' digests bunch: of 20,
// three fell within 0.03 of each other, and their syncs kept coming in the
// same second).
//
// Budgets created together (a cold start, a restart: the first key's
// first sync took its burst, the other keys' budgets come next, each with a
// backlog of syncs) would otherwise have room again at the same instants,
// one batch's spacing apart, and the calls they admit would come in bunches
// of a batch per key, on one grid, for as long as their backlogs last.
// Offset by a phase of its own, each budget admits on a grid of its own,
// its first batch included, so that the keys' calls come in the same order
// in every round, and the bunches spread over the spacing. It costs such a
// budget at most one burst's spacing, once (2.2 s at the management API's
// default limit; a batch smaller than what is left of its burst goes at
// once). A budget created alone, or while the first of its cohort still
// has room, starts rested.
func (s *Store) phaseFor(limit RateLimit, b *budget, now time.Time) float64 {
	if s.cohorts == nil {
		s.cohorts = map[RateLimit]cohort{}
	}
	c, ok := s.cohorts[limit]
	if !ok || now.Sub(c.latest) >= c.first.limiter.burstSpacing() {
		s.cohorts[limit] = cohort{first: b, latest: now}
		return 0
	}
	c.latest = now
	if !c.first.limiter.exhausted(now) {
		s.cohorts[limit] = c
		return 0
	}
	c.joined++
	s.cohorts[limit] = c
	_, phase := math.Modf(float64(c.joined) * goldenRatio)
	return phase
}

// goldenRatio's multiples, modulo 1, spread evenly however many are taken.
const goldenRatio = 0.6180339887498949

// sweep forgets the budgets that are as good as new: no hold, and a rested
// rate limiter.
func (s *Store) sweep(now time.Time) {
	s.lastSweep = now
	for l, c := range s.cohorts {
		if now.Sub(c.latest) >= c.first.limiter.burstSpacing() {
			delete(s.cohorts, l)
		}
	}
	for k, b := range s.budgets {
		if !b.holdUntil.After(now) && (b.limiter == nil || b.limiter.rested(now)) {
			delete(s.budgets, k)
		}
	}
}

// admit reserves n calls of key's budget; see Admit.
func (s *Store) admit(key budgetKey, api string, now time.Time, n int) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.get(key, api, now)
	if wait := b.holdUntil.Sub(now); wait > 0 {
		return wait
	}
	if b.limiter == nil || n <= 0 {
		return 0
	}
	return b.limiter.admit(now, n)
}

// hold records that key's budget may not be used before until.
func (s *Store) hold(key budgetKey, api string, now, until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.get(key, api, now)
	b.holdUntil = maxTime(b.holdUntil, until)
}

// heldUntil returns the end of key's hold, or the zero time when there is
// none at now.
func (s *Store) heldUntil(key budgetKey, now time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.budgets[key]; ok && b.holdUntil.After(now) {
		return b.holdUntil
	}
	return time.Time{}
}

// MaxBatch is the most calls of api one Admit can ever reserve: the limit's
// Requests, which a budget admits together once its window has room for
// them (a batch larger than Burst also waits for the pacing to catch up);
// 0 means unlimited. A caller with more calls to make splits them into
// batches of at most this many, or they would never be admitted.
//
// A budget with a reserve of its own (SetReserve) may admit fewer: the
// batch is then the least any budget of api admits, so that no batch is
// too large for the budget it goes to.
func (s *Store) MaxBatch(api string) int {
	l := s.limits[api]
	if !l.enabled() {
		return 0
	}
	most := l.Requests
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, r := range s.reserves {
		if r.enabled() && s.apiOf[key] == api {
			most = min(most, r.Requests)
		}
	}
	return most
}

// Allowance is how many calls per second the store admits on budget (a
// BudgetID of api: a credential at one host), margin included, under its
// own reserve if it has one; 0 means unlimited. The controller compares it
// with what the watches on a budget ask.
func (s *Store) Allowance(api, budget string) float64 {
	var key budgetKey
	copy(key[:], budget)
	s.mu.Lock()
	l := s.limitOf(key, api)
	s.mu.Unlock()
	if !l.enabled() {
		return 0
	}
	return float64(l.Requests) / windowOf(l).Seconds()
}

// CredentialID names the credential a budget is of by its digest, which is
// all that admission needs: a caller that waits for room in a budget can keep
// asking with the digest and read the credential again only when it is
// admitted, and the store never holds a secret. The cloud client's
// credentials and their digests implement it.
type CredentialID interface {
	// Digest is a SHA-256 digest of the credential: equal digests mean equal
	// credentials.
	Digest() [sha256.Size]byte
}

// budgetKey is a SHA-256 digest of a credential and what it is used for.
type budgetKey [sha256.Size]byte

// Sum is the SHA-256 digest of parts, each prefixed with its length so that
// ("ab", "c") and ("a", "bc") differ: how a budget is keyed, and how the
// cloud client names a credential without keeping it.
func Sum(parts ...string) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	var k [sha256.Size]byte
	copy(k[:], h.Sum(nil))
	return k
}

// budgetKeyOf identifies the budget of cred at baseURL on api: the API, its
// host as egress.HostKey keys it (as the service sees it: "API.example.com:443" and
// "https://api.example.com" are one host) and the credential's digest, so
// that the digest alone names the budget. A base URL that does not parse keys
// by its text: calls to it fail anyway.
func budgetKeyOf(api, baseURL string, cred CredentialID) budgetKey {
	d := cred.Digest()
	return Sum("budget", api, egress.HostKeyFromURL(baseURL), string(d[:]))
}

// BudgetID returns the full identifier of the budget (api, baseURL host,
// credential): the 32 bytes of its SHA-256 digest, never the credential.
// Whatever is kept per budget is keyed by it: two credentials never share
// an entry, whoever chose them.
func BudgetID(api, baseURL string, cred CredentialID) string {
	key := budgetKeyOf(api, baseURL, cred)
	return string(key[:])
}

// Fingerprint returns a short, stable, non-reversible identifier of the budget
// (api, baseURL host, credential) for metrics labels; never the credential.
//
// It is 12 hex digits (48 bits) of the budget's digest (BudgetID): enough to
// tell a manager's budgets apart on a dashboard, and the same across
// restarts, but a tenant can find colliding ones, so it only labels.
func Fingerprint(api, baseURL string, cred CredentialID) string {
	return FingerprintOf(BudgetID(api, baseURL, cred))
}

// FingerprintOf returns the Fingerprint of a BudgetID.
func FingerprintOf(budget string) string {
	return hex.EncodeToString([]byte(budget[:min(len(budget), 6)]))
}
