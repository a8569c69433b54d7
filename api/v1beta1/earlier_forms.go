package v1beta1

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Managers before issue 28 wrote source.kinesis.timestamp and
// source.pubsub.ackDeadline as JSON strings. The API server keeps such a
// status as it was stored (it validates writes, not reads), so a manager of
// today may read one back: decoding it into an int64 would fail the whole
// list its informer reads, and every watch with it. These decoders read the
// string form as absent instead. The status then differs from what the next
// sync builds, so that sync's patch replaces the list and no string stays
// behind. Like every decoder of the API machinery they ignore members the
// types lack (a newer manager's, after a rollback). The cloud's items never
// rely on them: the lenient reader reads these sources member by member,
// which keeps an unconvertible value and an unknown member in otherFields.

// UnmarshalJSON reads a kinesis source, its timestamp in the string form of
// earlier managers read as absent.
func (k *KinesisSource) UnmarshalJSON(data []byte) error {
	type plain KinesisSource
	aux := struct {
		*plain
		Timestamp json.RawMessage `json:"timestamp,omitempty"`
	}{plain: (*plain)(k)}
	if err := json.Unmarshal(data, &aux); err != nil {
		return fmt.Errorf("kinesis source: %w", err)
	}
	n, err := integerOrEarlierString(aux.Timestamp)
	if err != nil {
		return fmt.Errorf("kinesis source: timestamp: %w", err)
	}
	k.Timestamp = n
	return nil
}

// UnmarshalJSON reads a publish-subscribe source, its ackDeadline in the
// string form of earlier managers read as absent.
func (p *PubSubSource) UnmarshalJSON(data []byte) error {
	type plain PubSubSource
	aux := struct {
		*plain
		AckDeadline json.RawMessage `json:"ackDeadline,omitempty"`
	}{plain: (*plain)(p)}
	if err := json.Unmarshal(data, &aux); err != nil {
		return fmt.Errorf("pubsub source: %w", err)
	}
	n, err := integerOrEarlierString(aux.AckDeadline)
	if err != nil {
		return fmt.Errorf("pubsub source: ackDeadline: %w", err)
	}
	p.AckDeadline = n
	return nil
}

// integerOrEarlierString reads raw as an integer; absent, null and any
// string (the form of earlier managers) read as nil.
func integerOrEarlierString(raw json.RawMessage) (*int64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == '"' || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var n int64
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, err
	}
	return &n, nil
}
