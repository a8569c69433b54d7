package slim

import "hash/maphash"

// idSet remembers which ids a response has shown, as 64-bit hashes in an
// open-addressed table: 8 bytes a slot at most three quarters full, so a
// million ids cost 16 MiB at most, where a Go map takes about 25 bytes an
// entry and the ids themselves would take their length again.
//
// Two ids whose hashes collide would count as one: about one chance in ten
// million for a million ids. The seed is random per set, so no response can
// aim for it.
type idSet struct {
	seed  maphash.Seed
	slots []uint64 // 0 marks a free slot
	n     int
}

func newIDSet() idSet {
	return idSet{seed: maphash.MakeSeed(), slots: make([]uint64, 64)}
}

// add records id and reports whether it is new.
func (s *idSet) add(id string) bool {
	h := maphash.String(s.seed, id)
	if h == 0 {
		h = 1 // 0 marks a free slot
	}
	if 4*(s.n+1) > 3*len(s.slots) {
		s.grow()
	}
	return s.insert(h)
}

// insert places h by linear probing and reports whether it was absent.
func (s *idSet) insert(h uint64) bool {
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case 0:
			s.slots[i] = h
			s.n++
			return true
		case h:
			return false
		}
	}
}

// grow doubles the table.
func (s *idSet) grow() {
	old := s.slots
	s.slots, s.n = make([]uint64, 2*len(old)), 0
	for _, h := range old {
		if h != 0 {
			s.insert(h)
		}
	}
}
