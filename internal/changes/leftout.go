package changes

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"time"
)

// LeftOut is the record status.leftOutSince keeps of the items the status
// lists left out: for each, a digest of its kind, id and state, and its
// since. It holds no id, so it costs the same whatever the cloud's ids are,
// and tells an item's since only while its state is the one recorded.
type LeftOut map[string]time.Time

// Bounds of the record: what one entry is charged in status (its JSON, or
// its decoded string header and bytes, the larger; see bound.Charge), and
// the most entries it keeps (the CRD's MaxItems).
const (
	LeftOutEntryBytes = 64
	MaxLeftOut        = 1024
)

// kindLetters name the kinds in an entry.
var kindLetters = map[Kind]string{KindPipe: "p", KindReversePrivateEndpoint: "e", KindAlert: "a"}

// ParseLeftOut reads status.leftOutSince; an entry it cannot read is
// skipped (its item starts again).
func ParseLeftOut(entries []string) LeftOut {
	if len(entries) == 0 {
		return nil
	}
	record := make(LeftOut, len(entries))
	for _, e := range entries {
		key, secs, ok := strings.Cut(e[min(len(e), 2):], ":")
		if !ok || len(e) < 2 || e[1] != ':' {
			continue
		}
		unix, err := strconv.ParseInt(secs, 10, 64)
		if err != nil || unix <= 0 {
			continue
		}
		record[e[:2]+key] = time.Unix(unix, 0).UTC()
	}
	return record
}

// Since is when the item of kind and id was first seen in state, if the
// record keeps it in that state; zero otherwise.
func (l LeftOut) Since(kind Kind, id, state string) time.Time {
	if l == nil {
		return time.Time{}
	}
	return l[leftOutKey(kind, id, state)]
}

// Of is the part of the record of the kinds given: a list whose read
// failed keeps its entries as they are.
func (l LeftOut) Of(kinds ...Kind) LeftOut {
	out := LeftOut{}
	for key, since := range l {
		for _, k := range kinds {
			if strings.HasPrefix(key, kindLetters[k]+":") {
				out[key] = since
			}
		}
	}
	return out
}

// Add records the item of kind, id and state as first seen in it at since.
func (l LeftOut) Add(kind Kind, id, state string, since time.Time) {
	if id != "" && !since.IsZero() {
		l[leftOutKey(kind, id, state)] = since
	}
}

// Entries are the record as status keeps it, in a stable order.
func (l LeftOut) Entries() []string {
	if len(l) == 0 {
		return nil
	}
	out := make([]string, 0, len(l))
	for key, since := range l {
		out = append(out, key+":"+strconv.FormatInt(since.Unix(), 10))
	}
	slices.Sort(out)
	return out
}

// leftOutKey is an entry's kind letter and digest.
func leftOutKey(kind Kind, id, state string) string {
	sum := sha256.Sum256([]byte(strconv.Itoa(len(id)) + ":" + id + ":" + state))
	return kindLetters[kind] + ":" + hex.EncodeToString(sum[:8])
}
