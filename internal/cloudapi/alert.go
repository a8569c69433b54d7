package cloudapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
)

// Bounds of what is kept of one alert, so that a hundred alerts always fit in
// a status whatever the alert API sends (swv1.AlertStatus documents them).
const (
	maxAlertChannels              = 10
	maxExecutionErrors            = 5
	maxExecutionErrorMessageRunes = maxMessageRunes
	maxNoteRunes                  = 1024
	// maxWordRunes bounds the short strings of an execution error (its
	// type and timestamp).
	maxWordRunes = 64
	// maxLeftOut bounds AlertResult.LeftOut.
	maxLeftOut = 10
)

// alertEnvelope is the body of a successful alert API response.
type alertEnvelope struct {
	Data json.RawMessage `json:"data"`
}

// decodeAlert decodes a get-alert response body, {"data": {...}}, of either
// shape of the alert API (see swv1.AlertStatus). Each member is decoded on
// its own: one of a type the operator cannot use is left out, and named in
// leftOut, while the others stay; only a body that is not such an envelope
// fails. Free text the cloud wrote (execution errors, the note) is cleaned
// with s.
func decodeAlert(body []byte, s *scrubber) (a swv1.AlertStatus, leftOut []string, err error) {
	var env alertEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return swv1.AlertStatus{}, nil, fmt.Errorf("decode alert envelope: %w", err)
	}
	obj, ok := jsonObject(env.Data)
	if !ok {
		return swv1.AlertStatus{}, nil, errors.New("alert envelope data is not an object")
	}
	d := alertDecoder{obj: obj, scrub: s}
	d.decode(&a)
	return a, d.leftOut, nil
}

// alertDecoder decodes the members of one alert, recording those left out.
type alertDecoder struct {
	obj     map[string]json.RawMessage
	scrub   *scrubber
	leftOut []string
}

// The member the operator's own error field would read is not the cloud's:
// it is never read, like any member the operator does not know.
func (d *alertDecoder) decode(a *swv1.AlertStatus) {
	a.ID = deref(d.string("id"))
	a.Name = d.string("name")
	a.Message = d.string("message")
	a.Threshold = d.decimal("threshold")
	a.ThresholdMax = d.decimal("thresholdMax")
	a.Interval = d.string("interval")
	a.ThresholdType = d.string("thresholdType")
	a.Source = d.string("source")
	a.State = d.string("state")
	a.Channel = d.channel("channel", d.obj["channel"])
	a.Channels = d.channels()
	a.Team = d.renamed("teamId", "team")
	a.TileID = d.string("tileId")
	a.Dashboard = d.renamed("dashboardId", "dashboard")
	a.SavedSearch = d.renamed("savedSearchId", "savedSearch")
	a.GroupBy = d.string("groupBy")
	a.NumConsecutiveWindows = d.integer("numConsecutiveWindows")
	a.ScheduleOffsetMinutes = d.integer("scheduleOffsetMinutes")
	a.ScheduleStartAt = d.string("scheduleStartAt")
	a.Silenced = d.silenced()
	a.ExecutionErrors = d.executionErrors()
	if note := d.string("note"); note != nil {
		a.Note = new(d.scrub.cleanTo(*note, maxNoteRunes))
	}
	a.CreatedAt = d.string("createdAt")
	a.UpdatedAt = d.string("updatedAt")
}

// leave records that the member at path was left out.
func (d *alertDecoder) leave(path string) {
	if len(d.leftOut) < maxLeftOut {
		d.leftOut = append(d.leftOut, path)
	}
}

func (d *alertDecoder) string(name string) *string {
	v, ok := stringValue(d.obj[name])
	if !ok {
		d.leave(name)
	}
	return v
}

func (d *alertDecoder) decimal(name string) *swv1.Decimal {
	v, ok := decimalValue(d.obj[name])
	if !ok {
		d.leave(name)
	}
	return v
}

func (d *alertDecoder) integer(name string) *int64 {
	v, ok := integerValue(d.obj[name])
	if !ok {
		d.leave(name)
	}
	return v
}

// renamed reads a reference that newer servers send as newName and older
// ones as oldName. newName wins when both are usable: it is always the
// identifier, while the old name may hold the referenced document itself.
func (d *alertDecoder) renamed(newName, oldName string) *string {
	newV, newOK := refValue(d.obj[newName])
	oldV, oldOK := refValue(d.obj[oldName])
	if !newOK {
		d.leave(newName)
	}
	if !oldOK {
		d.leave(oldName)
	}
	if newV != nil {
		return newV
	}
	return oldV
}

// channel reads one {type, webhookId} object; nil for null or absent.
func (d *alertDecoder) channel(path string, raw json.RawMessage) *swv1.AlertChannel {
	if isNull(raw) {
		return nil
	}
	obj, ok := jsonObject(raw)
	if !ok {
		d.leave(path)
		return nil
	}
	c := &swv1.AlertChannel{}
	var typeOK, webhookOK bool
	c.Type, typeOK = stringValue(obj["type"])
	c.WebhookID, webhookOK = refValue(obj["webhookId"])
	if !typeOK {
		d.leave(path + ".type")
	}
	if !webhookOK {
		d.leave(path + ".webhookId")
	}
	return c
}

// channels reads the list of channels, the first maxAlertChannels of them.
func (d *alertDecoder) channels() []swv1.AlertChannel {
	items, ok := d.list("channels")
	if !ok {
		return nil
	}
	out := make([]swv1.AlertChannel, 0, min(len(items), maxAlertChannels))
	for i, raw := range items {
		if len(out) == maxAlertChannels {
			break
		}
		if c := d.channel(fmt.Sprintf("channels[%d]", i), raw); c != nil {
			out = append(out, *c)
		}
	}
	return out
}

// list reads an array member: ok false when absent, null or not an array
// (which is recorded). An empty array is kept: the cloud said "none".
func (d *alertDecoder) list(name string) ([]json.RawMessage, bool) {
	raw := d.obj[name]
	if isNull(raw) {
		return nil, false
	}
	var items []json.RawMessage
	if firstByte(raw) != '[' || json.Unmarshal(raw, &items) != nil {
		d.leave(name)
		return nil, false
	}
	return items, true
}

// silenced reads {by, at, until}. Any object says the alert is silenced,
// even one whose members are null; null or absent says it is not.
func (d *alertDecoder) silenced() *swv1.AlertSilence {
	raw := d.obj["silenced"]
	if isNull(raw) {
		return nil
	}
	obj, ok := jsonObject(raw)
	if !ok {
		d.leave("silenced")
		return nil
	}
	s := &swv1.AlertSilence{}
	for _, m := range []struct {
		name string
		dst  **string
		read func(json.RawMessage) (*string, bool)
	}{{"by", &s.By, refValue}, {"at", &s.At, stringValue}, {"until", &s.Until, stringValue}} {
		v, ok := m.read(obj[m.name])
		if !ok {
			d.leave("silenced." + m.name)
		}
		*m.dst = v
	}
	return s
}

// executionErrors reads the alert's recent failures and keeps the latest
// maxExecutionErrors, oldest first: ordered by timestamp (those without a
// readable one count as oldest), in the order sent among equals. Sorting
// the kept ones again changes nothing, so an unchanged cloud yields an
// unchanged status.
func (d *alertDecoder) executionErrors() []swv1.AlertExecutionError {
	items, ok := d.list("executionErrors")
	if !ok {
		return nil
	}
	type dated struct {
		at  time.Time
		err swv1.AlertExecutionError
	}
	all := make([]dated, 0, len(items))
	for i, raw := range items {
		path := fmt.Sprintf("executionErrors[%d]", i)
		obj, ok := jsonObject(raw)
		if !ok {
			d.leave(path)
			continue
		}
		var e swv1.AlertExecutionError
		var okTime, okType, okMessage bool
		e.Timestamp, okTime = stringValue(obj["timestamp"])
		e.Type, okType = stringValue(obj["type"])
		e.Message, okMessage = stringValue(obj["message"])
		for _, m := range []struct {
			ok   bool
			name string
		}{{okTime, "timestamp"}, {okType, "type"}, {okMessage, "message"}} {
			if !m.ok {
				d.leave(path + "." + m.name)
			}
		}
		e.Timestamp = d.cleanWord(e.Timestamp)
		e.Type = d.cleanWord(e.Type)
		if e.Message != nil {
			e.Message = new(d.scrub.cleanTo(hostOnlyURLs(*e.Message), maxExecutionErrorMessageRunes))
		}
		all = append(all, dated{at: ExecutionErrorTime(e), err: e})
	}
	slices.SortStableFunc(all, func(x, y dated) int { return x.at.Compare(y.at) })
	all = all[max(0, len(all)-maxExecutionErrors):]
	out := make([]swv1.AlertExecutionError, len(all))
	for i, x := range all {
		out[i] = x.err
	}
	return out
}

// cleanWord cleans a short string of the cloud's.
func (d *alertDecoder) cleanWord(s *string) *string {
	if s == nil {
		return nil
	}
	return new(d.scrub.cleanTo(*s, maxWordRunes))
}

// ExecutionErrorTime is when an execution error happened, the zero time when
// its timestamp is absent or not an RFC 3339 date-time.
func ExecutionErrorTime(e swv1.AlertExecutionError) time.Time {
	if e.Timestamp == nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, *e.Timestamp)
	if err != nil {
		return time.Time{}
	}
	return t
}

// isNull reports whether a member is absent or null.
func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(trimSpace(raw)) == "null"
}

func trimSpace(raw json.RawMessage) json.RawMessage {
	return json.RawMessage(strings.TrimSpace(string(raw)))
}

// stringValue reads a string member: nil for absent or null, ok false for
// another type.
func stringValue(raw json.RawMessage) (*string, bool) {
	if isNull(raw) {
		return nil, true
	}
	s, ok := jsonString(raw)
	if !ok {
		return nil, false
	}
	return &s, true
}

// refValue reads a reference to another object: its identifier as a string,
// or the object itself with a string id or _id (a server may send the
// referenced document in its place).
func refValue(raw json.RawMessage) (*string, bool) {
	if v, ok := stringValue(raw); ok {
		return v, true
	}
	obj, ok := jsonObject(raw)
	if !ok {
		return nil, false
	}
	for _, key := range []string{"id", "_id"} {
		if v, ok := stringValue(obj[key]); ok && v != nil {
			return v, true
		}
	}
	return nil, false
}

// numberText is the text of a JSON number, or of a string holding one (some
// servers and clients quote numbers); ok false for anything else.
func numberText(raw json.RawMessage) (json.Number, bool) {
	raw = trimSpace(raw)
	if s, ok := jsonString(raw); ok {
		raw = json.RawMessage(strings.TrimSpace(s))
	}
	var n json.Number
	if len(raw) == 0 || raw[0] == '"' || json.Unmarshal(raw, &n) != nil || n == "" {
		return "", false
	}
	return n, true
}

// decimalValue reads a decimal, kept exactly (swv1.Decimal); nil for absent
// or null, ok false for anything that is not a finite number.
func decimalValue(raw json.RawMessage) (*swv1.Decimal, bool) {
	if isNull(raw) {
		return nil, true
	}
	n, ok := numberText(raw)
	if !ok {
		return nil, false
	}
	var v swv1.Decimal
	if err := v.UnmarshalJSON([]byte(n)); err != nil {
		return nil, false
	}
	return &v, true
}

// integerValue reads a whole number (1, 1.0, "1"); nil for absent or null,
// ok false for a fraction, a number out of range or anything else.
func integerValue(raw json.RawMessage) (*int64, bool) {
	if isNull(raw) {
		return nil, true
	}
	n, ok := numberText(raw)
	if !ok {
		return nil, false
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return &i, true
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
		return nil, false
	}
	return new(int64(f)), true
}
