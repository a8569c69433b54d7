package redact

// cleanedError is an error whose text is cleaned like a message (credentials
// redacted, URLs shortened, bounded), while errors.Is and errors.As still
// reach the original.
type cleanedError struct {
	text string
	err  error
}

func (e *cleanedError) Error() string { return e.text }

func (e *cleanedError) Unwrap() error { return e.err }

// Wrap returns err with its text cleaned as Clean cleans a message, for an
// error that is shown (a condition, a log line): errors.Is and errors.As
// still reach err. nil stays nil.
func (s *Scrubber) Wrap(err error) error {
	if err == nil {
		return nil
	}
	return &cleanedError{text: s.Clean(err.Error()), err: err}
}
