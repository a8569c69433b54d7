package metrics

import "time"

// SetClock replaces the clock that tells at a scrape whether a silence has
// ended.
func (c *State) SetClock(now func() time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = now
}
