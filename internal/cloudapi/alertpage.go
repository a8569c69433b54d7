package cloudapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/servicewatch/servicewatch/internal/cloudapi/lenient"
	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
)

// alertPageReader reads one answer of a host's alert list as it streams
// in: the alert API's {"data":[...],"meta":{...}} (meta absent on older
// servers) or the management API's envelope, whose result is that object
// or, on some versions, the bare array. Members it does not know are
// skipped, charged to the answer's work budget.
type alertPageReader struct {
	ctx        context.Context
	dec        *json.Decoder
	httpStatus int
	managed    bool
	own        *redact.Scrubber
	scrubWork  int64
	work       *lenient.Work
	// limit is the most items of the list read (kept, handed or skipped);
	// each is AlertPageRequest.Each.
	limit int
	each  func(*AlertResult) int

	page      AlertPage
	meta      *alertPageMeta
	sawList   bool
	requestID string
	// failed is the first reason the answer is unusable; words are the
	// envelope's own, shown when its status disagrees.
	failed error
	words  string
}

// alertPageMeta is the meta member of a page: what the host says of the
// whole list.
type alertPageMeta struct {
	Total  *int `json:"total"`
	Limit  *int `json:"limit"`
	Offset *int `json:"offset"`
}

func newAlertPageReader(ctx context.Context, body io.Reader, httpStatus int, managed bool, own *redact.Scrubber, scrubWork, decodeWork int64) *alertPageReader {
	dec := json.NewDecoder(body)
	dec.UseNumber() // numbers in skipped members stay text
	return &alertPageReader{ctx: ctx, dec: dec, httpStatus: httpStatus, managed: managed, own: own, scrubWork: scrubWork,
		work: lenient.NewWork(decodeWork), limit: MaxAlertPageLimit}
}

// read reads the answer of the page asked at offset. An answer that is a
// JSON value but holds no list where the list belongs is ErrNoListRoute.
func (r *alertPageReader) read(offset int) (AlertPage, error) {
	tok, err := r.dec.Token()
	switch {
	case err != nil:
		return AlertPage{}, fmt.Errorf("%w: its answer is not JSON: %w", ErrNoListRoute, err)
	case tok != json.Delim('{'):
		return AlertPage{}, fmt.Errorf("%w: its answer is not a JSON object", ErrNoListRoute)
	}
	top := r.alertAPIMember
	if r.managed {
		top = r.envelopeMember
	}
	if err := r.members(top); err != nil {
		return AlertPage{RequestID: r.requestID}, err
	}
	if err := expectEnd(r.dec); err != nil {
		return AlertPage{RequestID: r.requestID}, err
	}
	switch {
	case r.failed != nil:
		return AlertPage{RequestID: r.requestID}, r.failed
	case !r.sawList:
		where := `"data"`
		if r.managed {
			where = `"result"`
		}
		return AlertPage{RequestID: r.requestID}, fmt.Errorf("%w: its answer has no %s list", ErrNoListRoute, where)
	}
	page := r.page
	page.RequestID = r.requestID
	page.Total, page.Offset = -1, offset
	if r.meta != nil && r.meta.Total != nil && *r.meta.Total >= 0 {
		page.Total = *r.meta.Total
		if r.meta.Offset != nil {
			page.Offset = *r.meta.Offset
		}
	}
	return page, nil
}

// members reads the members of an object whose opening brace is read, up
// to its closing one.
func (r *alertPageReader) members(member func(name string) error) error {
	return lenient.ReadMembers(r.dec, member)
}

// alertAPIMember reads a member of the alert API's page, or of the
// management result that has its shape.
func (r *alertPageReader) alertAPIMember(name string) error {
	switch name {
	case "data":
		return r.list(`"data"`)
	case "meta":
		var meta alertPageMeta
		err := r.dec.Decode(&meta)
		if valueConsumed(err) {
			if err == nil {
				r.meta = &meta
			}
			return nil // a meta of another shape says nothing: no meta
		}
		return fmt.Errorf("decode meta: %w", err)
	default:
		return skipValue(r.dec, r.work)
	}
}

// envelopeMember reads a member of the management envelope.
func (r *alertPageReader) envelopeMember(name string) error {
	switch name {
	case "status":
		status, err := decodeMember[*int64](r.dec, name)
		if status != nil && *status != int64(r.httpStatus) {
			r.fail(&envelopeStatusError{Status: *status, HTTPStatus: r.httpStatus, words: &r.words})
		}
		return r.failOrStop(err)
	case "error", "message":
		var raw json.RawMessage
		if err := r.dec.Decode(&raw); err != nil {
			return fmt.Errorf("decode %s: %w", name, err)
		}
		if err := r.work.Charge(lenient.ItemByteWork * len(raw)); err != nil {
			return err
		}
		if words := envelopeWords(raw); words != "" && (r.words == "" || name == "error") {
			r.words = words[:min(len(words), maxEnvelopeWordsBytes)]
		}
		return nil
	case "requestId":
		id, err := decodeMember[*string](r.dec, name)
		r.requestID = deref(id)
		return r.failOrStop(err)
	case "result":
		return r.result()
	default:
		return skipValue(r.dec, r.work)
	}
}

// result reads the management envelope's result: {data, meta} or the bare
// array of alerts.
func (r *alertPageReader) result() error {
	tok, err := r.dec.Token()
	if err == nil && tok == json.Delim('{') {
		return r.members(r.alertAPIMember)
	}
	if done, err := r.listOrNull(tok, err); done {
		return err
	}
	r.fail(fmt.Errorf(`%w: its "result" is neither a list nor an object`, ErrNoListRoute))
	return nil
}

// listOrNull reads the list whose first token (or error) the reader just
// read, when that token opens a list or is null (the vendor's clients read
// a null list as an empty one): done tells whether it was one of those.
func (r *alertPageReader) listOrNull(tok json.Token, err error) (done bool, _ error) {
	switch {
	case err != nil:
		return true, err
	case tok == json.Delim('['):
		r.sawList = true
		return true, r.elements()
	case tok == nil:
		r.sawList = true
		return true, nil
	}
	return false, nil
}

// list reads the list of alerts named where.
func (r *alertPageReader) list(where string) error {
	tok, err := r.dec.Token()
	if done, err := r.listOrNull(tok, err); done {
		return err
	}
	if tok == json.Delim('{') {
		r.fail(fmt.Errorf("%w: its %s is an object, not a list", ErrNoListRoute, where))
		r.sawList = true
		return r.members(func(string) error { return skipValue(r.dec, r.work) })
	}
	r.fail(fmt.Errorf("%w: its %s is not a list", ErrNoListRoute, where))
	r.sawList = true
	return nil
}

// elements reads the alerts of a list whose opening bracket is read, up to
// its closing one, one at a time in one buffer.
func (r *alertPageReader) elements() error {
	var raw json.RawMessage
	for r.dec.More() {
		if r.page.Read+r.page.Skipped >= r.limit {
			// Past the limit asked for: not decoded, not kept, counted.
			r.page.Beyond++
			if err := skipValue(r.dec, r.work); err != nil {
				return err
			}
			continue
		}
		raw = raw[:0]
		if err := r.dec.Decode(&raw); err != nil {
			return fmt.Errorf("decode alert %d: %w", r.page.Read+r.page.Skipped+1, err)
		}
		if err := r.add(raw); err != nil {
			return err
		}
	}
	_, err := r.dec.Token() // the closing bracket
	return err
}

// add reads one item of the list as GetAlert reads its alert: a bad member
// is that alert's LeftOut; an item that is not an object, has no id, or
// whose text cannot be scrubbed within its own scrubbing budget is
// skipped and counted, the others kept.
func (r *alertPageReader) add(raw json.RawMessage) error {
	if err := r.work.Charge(lenient.ItemByteWork*len(raw) + lenient.ItemWork); err != nil {
		return err
	}
	if r.failed != nil {
		return nil //nolint:nilerr // the answer is already unusable: its further items are dropped, the reading goes on
	}
	if lenient.FirstByte(raw) != '{' {
		r.page.Skipped++
		return nil
	}
	a, leftOut, err := lenient.ReadAlertWithin(raw, r.work)
	if err != nil {
		return err
	}
	scrub := r.own.Within(r.ctx, r.scrubWork)
	cleanAlert(&a, scrub)
	if err := scrub.Err(); err != nil {
		if ctxErr := r.ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		r.page.Skipped++
		return nil
	}
	if a.ID == "" {
		r.page.Skipped++
		return nil
	}
	r.page.Read++
	if r.each == nil {
		r.page.Alerts = append(r.page.Alerts, AlertResult{Alert: a, LeftOut: leftOut})
		return nil
	}
	return r.work.Charge(r.each(&AlertResult{Alert: a, LeftOut: leftOut}))
}

// fail records err if it is the first reason the answer is unusable.
func (r *alertPageReader) fail(err error) {
	if r.failed == nil {
		r.failed = err
	}
}

// failOrStop records err when the decoder consumed the value that caused
// it, so reading can go on, and returns any other error to stop reading.
func (r *alertPageReader) failOrStop(err error) error {
	if !valueConsumed(err) {
		return err
	}
	if err != nil {
		r.fail(err)
	}
	return nil
}
