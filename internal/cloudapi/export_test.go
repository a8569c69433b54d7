package cloudapi

import "time"

// SetClock replaces c's clock, so that a test can build the times a service
// answers with (an HTTP date, a Unix reset time) from the instant the client
// reads them at.
func SetClock(c *Client, now func() time.Time) { c.now = now }
