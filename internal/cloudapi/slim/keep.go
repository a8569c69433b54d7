package slim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/cloudapi/lenient"
)

// Keeper receives the items of one list response as they are decoded, and
// keeps what a list promises: each distinct item once, and of those the
// longest prefix of the (rank, id) order that fits the byte budget, its big
// items slimmed first when WithSlim is set and cut to their identities
// before any is dropped when WithIdentities is. The rank (WithRank) puts
// the items a user must act on first, so that they are the last to go;
// Items gives the kept ones in id order, whatever their rank. Items that share
// an id are settled by their content (the encoding that sorts first is
// kept), never by their order, and items without an id are ordered by a hash
// of their content, so that the same items in another order keep the same.
//
// Slimming cuts every item above a common cap to it. The cap is a fixed step
// (1 KiB × 2^i) under the water level of the items' unslimmed charges, at
// which they would all fit: it only falls as items come, and ends where all
// of them put it, whatever their order. A big item is slimmed as it comes,
// from its decoded form; kept items are slimmed again from their encoding
// when the cap steps down, a few times per list. All of it is charged to
// the answer's decode work. Two occurrences of one big id are compared
// slimmed to the cap of the moment: if the cap then steps down, which one
// is kept may differ from the order they would be in at the last cap (an
// edge the duplicates of real services, small items, do not reach).
//
// It holds the kept items as their JSON encoding, the very bytes the budget
// counts, and decodes them once more at the end: a decoded item can take
// thirty times its encoding ({} is a whole swv1.Pipe), and a heap of decoded
// items would also be copied each time it grows. So its memory is about the
// budget, under 100 bytes per kept item and 8 to 16 bytes per distinct
// id, never the size of the response.
type Keeper[T any] struct {
	idOf   func(*T) string
	rank   func(*T) int // nil: every item ranks 0
	each   func(*T)
	charge func(*T) int // nil: the JSON size alone
	budget int          // <= 0: keep everything

	seen  idSet
	total int
	// incomplete are the distinct items some fields of which were left out.
	incomplete incompleteItems

	kept    keptHeap
	arena   arena // the encodings of the kept items, and holes left by dropped ones
	encoder *json.Encoder
	used    int // summed charge of the kept items
	// cutoff is the smallest key ever dropped for want of room. An item at
	// or after it cannot be in the prefix: the prefix already stops before
	// the cutoff item.
	cutoff    itemKey
	hasCutoff bool

	// slim, when set, cuts inside an item to a byte target (see
	// internal/cloudapi/slim): then a big item is slimmed rather than dropped, and
	// items are dropped only when slimming can take no more. capBytes is the
	// most an item may be charged once slimming began (0: no cap yet), a
	// step of capLadder.
	slim     func(item *T, target int) (T, error)
	capBytes int
	// bareCharge, when set, is what an item is charged cut to its identity
	// with its omitted record, aloneCharge without it (see WithIdentities);
	// bareSum and aloneSum sum them over the kept items, and identitiesCut
	// says the last step was taken. identity cuts an item to its identity
	// alone.
	bareCharge    func(item *T) (int, error)
	aloneCharge   func(item *T) (int, error)
	identity      func(item *T) (T, int, error)
	bareSum       int
	aloneSum      int
	identitiesCut bool
	// work is the answer's decode work, to which the keeper charges what
	// slimming kept items costs it (their decoding and encoding).
	work *lenient.Work
	// replace, when set, hears that a duplicate took the place of the
	// item it kept for that id, so that what Each counted can follow.
	replace func(old, replacement *T)
}

// minSlimCap is the least cap slimming goes down to: under it an item is
// about its identity already (a bare pipe is charged 300 to 500 bytes
// decoded), and the list is cut to identities (WithIdentities), then by
// whole items. (Since issue 39 that answer's pipes are cut to their
// identities alone, as many as fit: 4,244 kept instead of 1,462, for about
// 57 % more garbage per call; see docs/benchmarks.md.) At 512, the worst
// answer for memory (memory-worst-60's: 10,100 pipes of empty nested
// objects, each about 600 bytes decoded) had every one of its pipes cut to
// its identity and a new omitted record, for 20 % more garbage per call and
// a peak 11 % higher (BenchmarkWorstMemoryAnswer), to show a third more
// pipes of nothing but an id.
const minSlimCap = 1024

// WithSlim makes the keeper slim big items (cut lists inside them, to the
// same length in each item above a common cap) before it drops any whole
// item, so that one big item never hides the others. Items are dropped, from
// the end of the (rank, id) order, only once the cap is at minSlimCap (and, with
// WithIdentities, their identities do not fit either). slim should
// charge its own work to work, as the keeper charges its decoding and
// encoding of the items it slims again.
func (k *Keeper[T]) WithSlim(slim func(item *T, target int) (T, error), work *lenient.Work) *Keeper[T] {
	k.slim, k.work = slim, work
	return k
}

// WithIdentities adds a last step to slimming: when the list does not fit
// with its items at minSlimCap, but would with its items cut to their
// identities (bareCharge says what one is charged so, without building
// it), no whole item is dropped: at the end, the items that save most are
// cut to their identities until the list fits (see cutToIdentities). When
// the identities do not fit either, whole items go from the end of the
// (rank, id) order until the identities of the rest do, and those are cut
// likewise: the list keeps as many items as fit by identity. The items
// kept meanwhile are at minSlimCap: at most budget ÷ (an identity's charge)
// of them, about 2,000 to 4,200 pipes of up to 1 KiB each for the default
// status size limit of 1 MiB (measured in status: 3,396 Kafka pipes,
// 4,189 Postgres pipes of 22 table mappings, each with its since).
//
// When the identities with their omitted records do not fit, but those
// alone do (aloneCharge; identity cuts an item so), the items are cut to
// their identities alone: a record is a map, about 300 bytes decoded, twice
// a pipe's identity. aloneCharge and identity may be nil: then the
// identities keep their records, and fewer items are listed.
func (k *Keeper[T]) WithIdentities(bareCharge, aloneCharge func(item *T) (int, error), identity func(item *T) (T, int, error)) *Keeper[T] {
	k.bareCharge, k.aloneCharge, k.identity = bareCharge, aloneCharge, identity
	return k
}

// WithRank orders the items for keeping by rank before id: the lowest rank
// is kept first and dropped (or cut to its identity) last. An id ranks as
// its first occurrence: a later duplicate of another rank settles which
// occurrence is kept only while its id is kept.
func (k *Keeper[T]) WithRank(rank func(*T) int) *Keeper[T] {
	k.rank = rank
	return k
}

// rankOf is item's rank, 0 without WithRank.
func (k *Keeper[T]) rankOf(item *T) int {
	if k.rank == nil {
		return 0
	}
	return k.rank(item)
}

// WithReplace has replace hear each time a duplicate takes the place of the
// item kept for its id (old as kept, slimmed or not), so that a caller that
// counts in Each can count what the list keeps. Of an id dropped whole, the
// first occurrence stays counted.
func (k *Keeper[T]) WithReplace(replace func(old, replacement *T)) *Keeper[T] {
	k.replace = replace
	return k
}

// NewKeeper returns a Keeper of the items idOf names ("" for an item
// without an id) that keeps at most keepBytes (<= 0: everything), each item
// counting the largest of its JSON encoding, MinItemCharge and charge(item)
// (charge may be nil). each, when not nil, sees every distinct item once, in
// response order, before it is kept or dropped; it must not retain it.
func NewKeeper[T any](idOf func(*T) string, keepBytes int, charge func(*T) int, each func(*T)) *Keeper[T] {
	k := &Keeper[T]{idOf: idOf, each: each, charge: charge, budget: keepBytes, seen: newIDSet()}
	k.encoder = json.NewEncoder(&k.arena)
	return k
}

// Add takes one decoded (and already redacted) item: it notes what report
// says was left out of it, shows it to Each and keeps it if it fits, or, if
// its id was met before, lets it settle which of the two is kept. It does
// not retain item.
func (k *Keeper[T]) Add(item *T, report lenient.Report) error {
	id := k.idOf(item)
	// Items without an id are never duplicates.
	if id != "" && !k.seen.add(id) {
		return k.duplicate(item, id)
	}
	k.total++
	if report.Count > 0 {
		k.incomplete.add(describeLeftOut(id, k.total, report))
	}
	if k.each != nil {
		k.each(item)
	}
	return k.keep(item, id)
}

// MinItemCharge is the least an item counts against the budget. A tiny item
// costs far more as a Go value (and in a status, its patch and the informer
// cache) than as JSON: `{}` is 3 bytes of JSON and over 100 of Go. Charging
// at least 64 bytes bounds a list of empty objects to budget/64 items (12,800
// for the default status budget) instead of a quarter of a million.
const MinItemCharge = 64

// keep stores item if it belongs to the longest fitting prefix of what was
// seen so far, dropping what no longer does.
func (k *Keeper[T]) keep(item *T, id string) error {
	key := itemKey{rank: k.rankOf(item), id: id, seq: k.total}
	if id != "" && k.hasCutoff && !key.less(k.cutoff) {
		return nil
	}
	callers, bare, alone := -1, 0, 0 // the caller's charge, once computed; the identity's, with its record and alone
	if id != "" && k.slim != nil && k.budget > 0 && k.charge != nil {
		callers = k.charge(item)
		var err error
		if bare, alone, err = k.identityCharge(item, callers); err != nil {
			return err
		}
		if whole := k.wholeOf(callers, 0); k.used+whole > k.budget || (k.capBytes > 0 && whole > k.capBytes) {
			return k.keepSlimmed(item, key, whole, bare, alone)
		}
	}
	off, size, err := k.encode(item)
	if err != nil {
		return err
	}
	if id == "" {
		// Items without an id are ordered by their content, so that the
		// same items in another order make the same list.
		key.content = contentHash(k.arena[off : off+size])
		if k.hasCutoff && !key.less(k.cutoff) {
			k.arena = k.arena[:off]
			return nil
		}
	}
	if callers < 0 {
		callers = k.chargeOf(item)
	}
	charge, whole := max(size, MinItemCharge, callers), k.wholeOf(callers, size)
	if k.slim != nil && k.budget > 0 && k.used+charge > k.budget {
		if err := k.lowerCap(whole); err != nil {
			return err
		}
	}
	if k.slim != nil && k.capBytes > 0 && charge > k.capBytes {
		k.forget(off, size)
		if off, size, charge, err = k.slimmed(item, k.capBytes); err != nil {
			return err
		}
	}
	if k.budget > 0 && k.used+charge > k.budget && k.kept.maxBelow(key) && k.slim == nil {
		// It would be the first to go: drop it before storing it.
		k.arena = k.arena[:off]
		k.cutoff, k.hasCutoff = key, true
		return nil
	}
	if bare == 0 {
		bare = charge // no identity to cut it to
	}
	if alone == 0 {
		alone = bare
	}
	return k.push(keptEntry{key: key, off: off, size: size, charge: charge, whole: whole, bareCharge: clampInt32(bare), aloneCharge: clampInt32(alone)})
}

// identityCharge is what item is charged cut to its identity (at most its
// charge, callers), with its omitted record and alone; 0 when the keeper
// has no identity step.
func (k *Keeper[T]) identityCharge(item *T, callers int) (bare, alone int, err error) {
	if k.bareCharge == nil {
		return 0, 0, nil
	}
	of := func(size func(*T) (int, error)) (int, error) {
		c, err := size(item)
		if err != nil {
			return 0, fmt.Errorf("size identity: %w", err)
		}
		return min(max(c+1, MinItemCharge), max(callers, MinItemCharge)), nil // +1: its newline
	}
	if bare, err = of(k.bareCharge); err != nil || k.aloneCharge == nil {
		return bare, bare, err
	}
	alone, err = of(k.aloneCharge)
	return bare, alone, err
}

// keepSlimmed keeps an item that needs room: the cap is lowered with it
// counted, and the item is slimmed from its decoded form as it comes,
// without encoding it whole first (a 1 MB item slimmed to 256 KiB is
// encoded once, at 256 KiB).
func (k *Keeper[T]) keepSlimmed(item *T, key itemKey, whole, bare, alone int) error {
	if k.used+whole > k.budget {
		if err := k.lowerCap(whole); err != nil {
			return err
		}
	}
	e := keptEntry{key: key, whole: whole, bareCharge: clampInt32(bare), aloneCharge: clampInt32(alone)}
	var err error
	if k.capBytes > 0 && whole > k.capBytes {
		e.off, e.size, e.charge, err = k.slimmed(item, k.capBytes)
		e.bare = e.charge > k.capBytes
	} else {
		e.off, e.size, err = k.encode(item)
		e.charge = max(e.size, whole)
	}
	if err != nil {
		return err
	}
	return k.push(e)
}

// push keeps e and drops what then no longer fits.
func (k *Keeper[T]) push(e keptEntry) error {
	k.kept.push(e)
	k.used += e.charge
	k.bareSum += int(e.bareCharge)
	k.aloneSum += int(e.aloneCharge)
	return k.fit()
}

// wholeOf is what the cap counts for an item unslimmed: the caller's
// charge of it when there is one (for the API types, their decoded size,
// the larger), known without encoding the item; else the size of its
// encoding. It depends on the item alone, so that the cap does.
func (k *Keeper[T]) wholeOf(callers, size int) int {
	if k.charge != nil {
		return max(MinItemCharge, callers)
	}
	return max(MinItemCharge, size)
}

// duplicate settles an item whose id was met before. Which of the two is
// kept depends on their content, never on their order: the one whose
// encoding sorts first (both slimmed to the cap, once slimming began). The id counts the largest charge of its
// occurrences, so that the prefix that fits does not depend on which came
// first either (a charge that only grows keeps the invariant of keep). An id
// at or after the cutoff stays dropped, whatever its occurrences, and so
// does one whose first occurrence, of another rank, was dropped.
func (k *Keeper[T]) duplicate(item *T, id string) error {
	if k.hasCutoff && !(itemKey{rank: k.rankOf(item), id: id}).idBefore(k.cutoff) {
		return nil
	}
	i, ok := k.kept.find(id)
	if !ok { // its first occurrence ranked after the cutoff: dropped
		return nil
	}
	off, size, err := k.encode(item)
	if err != nil {
		return err
	}
	callers := k.chargeOf(item)
	whole := max(size, MinItemCharge, callers)
	slimmedCharge, capped := whole, k.wholeOf(callers, size)
	if k.slim != nil && k.capBytes > 0 && whole > k.capBytes {
		// Compared as kept: slimmed to the same cap.
		k.arena = k.arena[:off]
		if off, size, slimmedCharge, err = k.slimmed(item, k.capBytes); err != nil {
			return err
		}
	}
	e := &k.kept.entries[i]
	e.whole = max(e.whole, capped)
	bare, alone, err := k.identityCharge(item, callers)
	if err != nil {
		return err
	}
	if bare > int(e.bareCharge) {
		k.bareSum += bare - int(e.bareCharge)
		e.bareCharge = int32(bare)
	}
	if alone > int(e.aloneCharge) {
		k.aloneSum += alone - int(e.aloneCharge)
		e.aloneCharge = int32(alone)
	}
	charge := max(slimmedCharge, e.charge)
	if bytes.Compare(k.arena[off:off+size], k.arena[e.off:e.off+e.size]) < 0 {
		if err := k.replaced(*e, item); err != nil {
			return err
		}
		e.off, e.size = off, size // the old encoding is a hole now
	} else {
		k.arena = k.arena[:off]
	}
	k.used += charge - e.charge
	e.charge = charge
	return k.fit()
}

// forget drops the encoding at off, last in the arena or (when kept items
// were slimmed again after it) a hole there until compactArena.
func (k *Keeper[T]) forget(off, size int) {
	if len(k.arena) == off+size {
		k.arena = k.arena[:off]
	}
}

// encode appends item's encoding to the arena and says where it is.
func (k *Keeper[T]) encode(item *T) (off, size int, err error) {
	off = len(k.arena)
	if err := k.encoder.Encode(item); err != nil {
		return 0, 0, fmt.Errorf("encode item: %w", err)
	}
	// Encode ends the value with a newline, which stands for the comma.
	return off, len(k.arena) - off, nil
}

// fit drops the largest keys until the kept items fit the budget.
//
// The kept items are the longest fitting prefix of the items seen so far.
// Invariant: they are exactly the seen items before the cutoff, they fit,
// and (once there is a cutoff) they do not fit together with the cutoff
// item, the next one in key order. An item at or after the cutoff leaves all
// three true by being dropped. One before it joins (or a kept one grows);
// popping the largest keys until the rest fits then leaves the items before
// the last key popped, which did not fit with them: the new cutoff. Without
// the cutoff, an item after a dropped one could later slip in ahead of it
// and leave a gap in the prefix.
func (k *Keeper[T]) fit() error {
	for k.budget > 0 && k.used > k.budget {
		if lowered, err := k.slimBig(); err != nil {
			return err
		} else if lowered {
			continue
		}
		if k.identitiesFit() {
			break // cut to identities at the end, once all items are in
		}
		dropped := k.kept.pop()
		k.used -= dropped.charge
		k.bareSum -= int(dropped.bareCharge)
		k.aloneSum -= int(dropped.aloneCharge)
		k.cutoff, k.hasCutoff = dropped.key, true
	}
	k.compactArena()
	return nil
}

// Items decodes the kept items, in id order (items without an id first,
// by content), whatever their rank. The Keeper is spent after it.
// The result is never nil, so that an empty result reads as an empty list.
func (k *Keeper[T]) Items() ([]T, error) {
	kept, err := k.Encoded()
	if err != nil {
		return nil, err
	}
	return kept.Decode()
}

// Encoded is the kept items as Items orders them, still encoded: for a
// caller that holds them a while before it needs them (a read waiting for
// its status write), their JSON costs a fraction of the decoded items when
// they are small (an empty nested object: a few bytes of JSON, a hundred
// decoded). The Keeper is spent after it.
func (k *Keeper[T]) Encoded() (Encoded[T], error) {
	if k.capBytes > 0 {
		// The cap the items set, whatever their order: while they came, it
		// was lowered only as far as room was needed.
		if err := k.lowerCap(0); err != nil {
			return Encoded[T]{}, err
		}
	}
	if k.budget > 0 && k.used > k.budget {
		if err := k.cutToIdentities(); err != nil {
			return Encoded[T]{}, err
		}
	}
	entries := k.kept.sorted()
	if k.rank != nil {
		slices.SortFunc(entries, func(a, b keptEntry) int {
			if a.key.listedBefore(b.key) {
				return -1
			}
			return 1
		})
	}
	size := 0
	for _, e := range entries {
		size += e.size
	}
	// A copy of the kept encodings alone: the arena also holds those of
	// the items slimmed, cut or dropped since.
	data := make([]byte, 0, size)
	for _, e := range entries {
		data = append(data, k.arena[e.off:e.off+e.size]...)
	}
	k.arena = nil
	return Encoded[T]{data: data, n: len(entries)}, nil
}

// maxIncompleteItems bounds the items Incomplete describes.
const maxIncompleteItems = 5

// incompleteItems counts the items of a list that lost fields, and describes
// the first few.
type incompleteItems struct {
	count int
	items []string
}

func (c *incompleteItems) add(description string) {
	c.count++
	if len(c.items) < maxIncompleteItems {
		c.items = append(c.items, bound.Cut(description, 200))
	}
}

// describeLeftOut names an item (by id, or by its place among the distinct
// items) and the paths left out of it.
func describeLeftOut(id string, n int, report lenient.Report) string {
	name := fmt.Sprintf("item %d", n)
	if id != "" {
		name = bound.Cut(id, 64)
	}
	paths := strings.Join(report.LeftOut, ", ")
	if more := report.Count - len(report.LeftOut); more > 0 {
		paths += fmt.Sprintf(" and %d more", more)
	}
	return name + " (" + paths + ")"
}

// chargeOf is the caller's charge for item, 0 without one.
func (k *Keeper[T]) chargeOf(item *T) int {
	if k.charge == nil {
		return 0
	}
	return k.charge(item)
}

// Total counts the distinct items added, kept or not.
func (k *Keeper[T]) Total() int { return k.total }

// Incomplete counts the items some fields of which were left out, and the
// items left out whole (LeaveOut), and describes the first few of them, each
// as its id (or "item N") and the paths left out.
func (k *Keeper[T]) Incomplete() (count int, items []string) {
	return k.incomplete.count, k.incomplete.items
}

// LeaveOut counts the item at position (1 for the first of the response)
// as left out whole, because reading it failed with err.
func (k *Keeper[T]) LeaveOut(position int, err error) {
	k.incomplete.add(fmt.Sprintf("item %d (%v, left out)", position, err))
}

// slimmed encodes item slimmed to target, and what it is charged.
func (k *Keeper[T]) slimmed(item *T, target int) (off, size, charge int, err error) {
	small, err := k.slim(item, target-1) // the encoding's newline counts too
	if err != nil {
		return 0, 0, 0, fmt.Errorf("slim item: %w", err)
	}
	if off, size, err = k.encode(&small); err != nil {
		return 0, 0, 0, err
	}
	if err := k.work.Charge(lenient.ItemByteWork * size); err != nil {
		return 0, 0, 0, err
	}
	return off, size, max(size, MinItemCharge, k.chargeOf(&small)), nil
}

// capLadder is the cap for a water level: the largest minSlimCap × 2^i at
// or under it. Because the steps are fixed and the water level of the items
// seen only falls as more come, the last cap is that of all the items,
// whatever their order, and every kept item is slimmed to it: the same
// items in another order keep the same. Each step down slims every kept
// item again (from its encoding), so the steps are few: a factor of 2 costs
// at most half the room an item could have had, and a list at most
// log2(its largest item / minSlimCap) rounds of decoding its kept items.
func capLadder(level int) int {
	step := minSlimCap
	for step*2 <= level {
		step *= 2
	}
	return step
}

// slimBig lowers the cap one step below the kept items' charges' water
// level and slims every kept item above it (see lowerCap). It reports false
// when the cap can go no lower: then whole items must go.
func (k *Keeper[T]) slimBig() (bool, error) {
	if k.slim == nil {
		return false, nil
	}
	before := k.capBytes
	if err := k.lowerCap(0); err != nil {
		return false, err
	}
	if k.capBytes == before { // items slimmed bare still do not fit
		if k.capBytes <= minSlimCap {
			return false, nil
		}
		k.capBytes = capLadder(k.capBytes - 1)
		return true, k.reslimAbove()
	}
	return true, nil
}

// lowerCap sets the cap to the step of the water level of the kept items'
// whole charges and incoming's (the charge of an item about to be kept; 0
// for none), never raising it, and slims every kept item above it.
func (k *Keeper[T]) lowerCap(incoming int) error {
	if k.capBytes == minSlimCap || (k.capBytes > 0 && k.cappedSum(incoming) <= k.budget) {
		return nil // as low as it goes, or low enough
	}
	wholes := make([]int, 0, len(k.kept.entries)+1)
	for _, e := range k.kept.entries {
		wholes = append(wholes, e.whole)
	}
	if incoming > 0 {
		wholes = append(wholes, incoming)
	}
	level := waterLevel(wholes, k.budget)
	if level == math.MaxInt {
		return nil // they fit whole
	}
	c := capLadder(max(level, minSlimCap))
	if k.capBytes > 0 && c >= k.capBytes {
		return nil
	}
	k.capBytes = c
	return k.reslimAbove()
}

// cappedSum is what the kept items and incoming would be charged, each
// slimmed to the cap exactly.
func (k *Keeper[T]) cappedSum(incoming int) int {
	sum := min(incoming, k.capBytes)
	for _, e := range k.kept.entries {
		sum += min(e.whole, k.capBytes)
	}
	return sum
}

// reslimAbove slims every kept item charged above the cap to it.
func (k *Keeper[T]) reslimAbove() error {
	for i := range k.kept.entries {
		if e := &k.kept.entries[i]; e.charge > k.capBytes && !e.bare {
			if err := k.reslim(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// reslim slims a kept entry to the cap, from its encoding.
func (k *Keeper[T]) reslim(e *keptEntry) error {
	shrunk, err := k.reslimTo(e, k.capBytes)
	if err == nil && !shrunk { // its identity alone is no smaller
		e.bare = true
	}
	return err
}

// reslimTo slims a kept entry to target bytes, from its encoding, and
// tells whether that made it smaller; if not, the entry stays as it was.
func (k *Keeper[T]) reslimTo(e *keptEntry, target int) (shrunk bool, err error) {
	if err := k.work.Charge(lenient.ItemByteWork * e.size); err != nil {
		return false, err
	}
	var item T
	if err := json.Unmarshal(k.arena[e.off:e.off+e.size], &item); err != nil {
		return false, fmt.Errorf("decode kept item: %w", err)
	}
	off, size, charge, err := k.slimmed(&item, target)
	if err != nil {
		return false, err
	}
	if charge >= e.charge {
		k.forget(off, size)
		return false, nil
	}
	k.used += charge - e.charge
	e.off, e.size, e.charge, e.bare = off, size, charge, charge > target
	return true, nil
}

// replaced tells replace that item takes the place of the kept entry e.
func (k *Keeper[T]) replaced(e keptEntry, item *T) error {
	if k.replace == nil {
		return nil
	}
	var old T
	if err := json.Unmarshal(k.arena[e.off:e.off+e.size], &old); err != nil {
		return fmt.Errorf("decode kept item: %w", err)
	}
	k.replace(&old, item)
	return nil
}

// waterLevel is the largest level such that the charges, each capped at it,
// sum to at most budget.
func waterLevel(charges []int, budget int) int {
	slices.Sort(charges)
	rest := budget
	for i, c := range charges {
		left := len(charges) - i
		if c*left > rest {
			return rest / left
		}
		rest -= c
	}
	return math.MaxInt
}

// clampInt32 is n, at most math.MaxInt32: an identity charged more never
// fits a budget anyway.
func clampInt32(n int) int32 { return int32(min(n, math.MaxInt32)) }

// identitiesFit reports whether the kept items, over the budget with the
// cap at its floor, would fit cut to their identities: then no whole item
// goes yet. Counted from the charges alone. When they do not, whole items
// go from the end of the (rank, id) order only until the identities of
// the rest fit (fit): the list keeps as many items as the budget holds by
// identity, and cuts them at the end (cutToIdentities), so that a long list
// lists about budget ÷ (an identity's charge) items, not budget ÷ the cap.
func (k *Keeper[T]) identitiesFit() bool {
	return k.bareCharge != nil && !k.identitiesCut && k.capBytes <= minSlimCap && min(k.bareSum, k.aloneSum) <= k.budget
}

// cutToIdentities cuts kept items to their identities, those that save most
// first (among equals, from the end of the (rank, id) order, where whole
// items would go: the same items in any order give the same list), until the
// list fits; what still does not fit (an identity
// charged more than counted) then goes by whole items, as always.
func (k *Keeper[T]) cutToIdentities() error {
	k.identitiesCut = true
	es := k.kept.entries
	order := make([]int, len(es))
	for i := range order {
		order[i] = i
	}
	// With their records when those fit, else alone.
	withRecords := k.bareSum <= k.budget || k.identity == nil
	saves := func(e *keptEntry) int { return e.charge - int(e.bareCharge) }
	if !withRecords {
		saves = func(e *keptEntry) int { return e.charge - int(e.aloneCharge) }
	}
	slices.SortFunc(order, func(a, b int) int {
		if d := saves(&es[b]) - saves(&es[a]); d != 0 {
			return d
		}
		if es[b].key.less(es[a].key) {
			return -1 // from the end of the (rank, id) order, where whole items would go
		}
		return 1
	})
	for _, i := range order {
		e := &es[i]
		if k.used <= k.budget || saves(e) <= 0 {
			break
		}
		if err := k.cutToIdentity(e, withRecords); err != nil {
			return err
		}
	}
	return k.fit()
}

// cutToIdentity cuts a kept entry to its identity, from its encoding: with
// its omitted record (a target of 0: nothing fits but the identity, so a
// cut entry is bare), or alone.
func (k *Keeper[T]) cutToIdentity(e *keptEntry, withRecord bool) error {
	if withRecord {
		_, err := k.reslimTo(e, 0)
		return err
	}
	if err := k.work.Charge(lenient.ItemByteWork * e.size); err != nil {
		return err
	}
	var item T
	if err := json.Unmarshal(k.arena[e.off:e.off+e.size], &item); err != nil {
		return fmt.Errorf("decode kept item: %w", err)
	}
	alone, _, err := k.identity(&item)
	if err != nil {
		return fmt.Errorf("cut item to its identity: %w", err)
	}
	off, size, err := k.encode(&alone)
	if err != nil {
		return err
	}
	charge := max(size, MinItemCharge, k.chargeOf(&alone))
	if charge >= e.charge {
		k.forget(off, size)
		return nil
	}
	k.used += charge - e.charge
	e.off, e.size, e.charge, e.bare = off, size, charge, true
	return nil
}
