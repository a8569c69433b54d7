package pacing

// Level orders the syncs that wait for a worker, a read slot or a busy
// budget: a new watch, a spec change or a requested-at annotation first,
// then the watches whose Secret changed (rotating one Secret can make
// hundreds of watches due at once, and another tenant's new watch must not
// wait behind them), then periodic refreshes.
type Level int

// The levels, lowest first.
const (
	Periodic Level = iota
	Secret
	User
	// Levels is the number of levels.
	Levels
)

// String names the level in metrics: user, secret or periodic.
func (l Level) String() string {
	switch l {
	case User:
		return "user"
	case Secret:
		return "secret"
	default:
		return "periodic"
	}
}
