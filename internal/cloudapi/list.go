package cloudapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi/lenient"
	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
	"github.com/servicewatch/servicewatch/internal/cloudapi/slim"
)

// listDecoder decodes the body of a list response.
type listDecoder[T any] func(body io.Reader, httpStatus int, in listInput[T]) (List[T], error)

// listInput is what one list call decodes its answer with: the caller's
// options, the scrubber of the call's credential, and the answer's work
// budget (see lenient.Work).
type listInput[T any] struct {
	opts  ListOptions[T]
	scrub *redact.Scrubber
	work  *lenient.Work
}

// decodePipes decodes a list-pipes response body.
func decodePipes(body io.Reader, httpStatus int, in listInput[swv1.Pipe]) (List[swv1.Pipe], error) {
	return decodeList(body, httpStatus, pipeID, attentionFirst[swv1.Pipe], lenient.ReadPipe, slim.Pipes, in)
}

// decodeReversePrivateEndpoints decodes a list-reverse-private-endpoints
// response body.
func decodeReversePrivateEndpoints(body io.Reader, httpStatus int, in listInput[swv1.ReversePrivateEndpoint]) (List[swv1.ReversePrivateEndpoint], error) {
	return decodeList(body, httpStatus, endpointID, attentionFirst[swv1.ReversePrivateEndpoint], lenient.ReadEndpoint, slim.Endpoints, in)
}

// attentionFirst ranks the items that need attention (a pipe or endpoint
// in a failing state, see the API types' NeedsAttention) before the
// others: a list that does not fit keeps them first.
func attentionFirst[T any, P interface {
	*T
	NeedsAttention() bool
}](item *T) int {
	if P(item).NeedsAttention() {
		return 0
	}
	return 1
}

func pipeID(p *swv1.Pipe) string { return deref(p.ID) }

func endpointID(e *swv1.ReversePrivateEndpoint) string { return deref(e.ID) }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// itemRead reads one item of a list into item (see lenient.ReadPipe).
type itemRead[T any] func(strict *lenient.Strict, raw []byte, item *T) (lenient.Report, error)

// decodeList reads the management envelope
// {"status":..,"requestId":..,"result":[...]} from body as a stream, its
// members in any order, and hands each item of result to a keeper as soon as
// it is decoded: memory follows what is kept, not the size of the response.
// Members other than these three are skipped token by token. Each item is
// read on its own by read (see lenient.ReadPipe): what it cannot use of an
// item is left out of that item, and reported in List.Incomplete. Every
// string of an item is scrubbed of the call's credential before anyone sees
// the item, and decoding stops, failing the call, once the answer has cost
// its work budget: nothing of it is kept.
//
// An item too big for KeepBytes is slimmed (shape says what it keeps, see
// internal/cloudapi/slim) before any whole item is dropped; when the list does not
// fit, the items rank ranks first (those that need attention) are kept
// first.
func decodeList[T any](body io.Reader, httpStatus int, idOf func(*T) string, rank func(*T) int, read itemRead[T], shape slim.Shape, in listInput[T]) (List[T], error) {
	dec := json.NewDecoder(body)
	// Numbers in skipped members stay text: 1e999 is valid JSON.
	dec.UseNumber()
	opts := in.opts
	slimmer := slim.New[T](shape).WithWork(in.work.Charge)
	env := &envelopeReader[T]{dec: dec, httpStatus: httpStatus, read: read, work: in.work,
		strict: lenient.NewStrictFor(in.scrub, in.work), keep: slim.NewKeeper(idOf, opts.KeepBytes, opts.Charge, opts.Each).
			WithRank(rank).WithReplace(opts.Replace).WithSlim(slimmer.Item, in.work).WithIdentities(slimmer.BareCharge, slimmer.IdentityCharge, slimmer.Identity)}
	err := lenient.ReadObject(dec, env.member)
	if err == nil {
		err = expectEnd(dec)
	}
	switch {
	case env.failed != nil:
		err = env.failed
	case err == nil && !env.sawResult:
		err = errors.New("envelope result is missing")
	}
	incomplete, incompleteItems := env.keep.Incomplete()
	for i, item := range incompleteItems {
		incompleteItems[i] = scrubbed(in.scrub, item)
	}
	list := List[T]{RequestID: cleanRequestID(in.scrub, env.requestID), Total: env.keep.Total(), Incomplete: incomplete, IncompleteItems: incompleteItems}
	switch { // may slim once more: work too
	case err == nil && opts.KeepEncoded:
		list.Encoded, err = env.keep.Encoded()
	case err == nil:
		list.Items, err = env.keep.Items()
	}
	if in.opts.Work != nil {
		in.opts.Work(in.work.Used())
	}
	if err != nil {
		return List[T]{RequestID: env.requestID}, fmt.Errorf("decode management response: %w", err)
	}
	return list, nil
}

// envelopeReader reads the members of one management envelope.
//
// A response found unusable (a status that disagrees, an item of the wrong
// shape) is still read to its end, its further items decoded and dropped,
// so that the error can quote the request ID wherever the envelope puts it.
type envelopeReader[T any] struct {
	dec        *json.Decoder
	httpStatus int
	read       itemRead[T]
	strict     *lenient.Strict
	work       *lenient.Work
	keep       *slim.Keeper[T]
	// item is where each item is read: the keeper and Each retain none.
	item T
	// position counts the items of result, for naming those without an id.
	position  int
	requestID string
	sawResult bool
	failed    error // the first reason the response is unusable
	// words are the envelope's own error words, shown when its status
	// disagrees with the HTTP status.
	words string
}

// maxEnvelopeWordsBytes bounds what is kept of an envelope's error words:
// far more than a message shows, so that what is cut is never what shows.
const maxEnvelopeWordsBytes = 8 << 10

// readWords reads the envelope's member name ("error" or "message"),
// keeping its words: a string, or an object's "message". The first member
// with words wins, "error" before "message" as the spec names it.
func (e *envelopeReader[T]) readWords(name string) error {
	var raw json.RawMessage
	if err := e.dec.Decode(&raw); err != nil {
		return fmt.Errorf("decode %s: %w", name, err)
	}
	if err := e.work.Charge(lenient.ItemByteWork * len(raw)); err != nil {
		return err
	}
	words, ok := lenient.String(raw)
	if !ok {
		if obj, isObject := lenient.Object(raw); isObject {
			words = firstString(obj, "message", "error")
		}
	}
	if words = strings.TrimSpace(words); words != "" && (e.words == "" || name == "error") {
		e.words = words[:min(len(words), maxEnvelopeWordsBytes)]
	}
	return nil
}

// envelopeStatusError is a management envelope whose own status disagrees
// with the HTTP status, such as a 200 whose envelope says 500: the answer
// is not used, and its error words (Words) are the service's.
type envelopeStatusError struct {
	// Status is the envelope's, HTTPStatus the response's.
	Status     int64
	HTTPStatus int
	words      *string
}

// Error names the disagreement; the words are the caller's to clean.
func (e *envelopeStatusError) Error() string {
	return fmt.Sprintf("envelope status %d disagrees with HTTP status %d", e.Status, e.HTTPStatus)
}

// Words are the envelope's error words, as sent: wherever the envelope put
// them, before or after its status.
func (e *envelopeStatusError) Words() string { return *e.words }

// member reads the value of the member name.
func (e *envelopeReader[T]) member(name string) error {
	switch name {
	case "status":
		status, err := decodeMember[*int64](e.dec, name)
		if status != nil && *status != int64(e.httpStatus) {
			e.fail(&envelopeStatusError{Status: *status, HTTPStatus: e.httpStatus, words: &e.words})
		}
		return e.failOrStop(err)
	case "error", "message":
		return e.readWords(name)
	case "requestId":
		id, err := decodeMember[*string](e.dec, name)
		e.requestID = deref(id)
		return e.failOrStop(err)
	case "result":
		if e.sawResult {
			e.fail(errors.New("envelope has two result members"))
		}
		e.sawResult = true
		return readArray(e.dec, e.add, e.failOrStop)
	default:
		return skipValue(e.dec, e.work)
	}
}

// add reads one item of result and hands it to the keeper, unless the
// response is already unusable. An item that is not an object is left out
// whole, and reported. A spent work budget stops the reading: its error is
// returned.
func (e *envelopeReader[T]) add(raw json.RawMessage) error {
	e.position++
	if err := e.work.Charge(lenient.ItemByteWork*len(raw) + lenient.ItemWork); err != nil {
		return err
	}
	if e.failed != nil {
		return nil //nolint:nilerr // the answer is already unusable: its further items are dropped, the reading goes on
	}
	report, err := e.read(e.strict, raw, &e.item)
	if errors.Is(err, lenient.ErrWorkBudget) {
		return err
	}
	e.keepOrLeaveOut(&e.item, report, err)
	return nil
}

// keepOrLeaveOut hands an item read to the keeper, or, when reading it
// failed with err, counts it as left out whole.
func (e *envelopeReader[T]) keepOrLeaveOut(item *T, report lenient.Report, err error) {
	if err != nil {
		e.keep.LeaveOut(e.position, err)
		return
	}
	e.fail(e.keep.Add(item, report))
}

// fail records err (when not nil) if it is the first reason the response is
// unusable.
func (e *envelopeReader[T]) fail(err error) {
	if e.failed == nil {
		e.failed = err
	}
}

// failOrStop records err when the decoder consumed the value that caused it,
// so reading can go on, and returns any other error to stop reading.
func (e *envelopeReader[T]) failOrStop(err error) error {
	if !valueConsumed(err) {
		return err
	}
	e.fail(err)
	return nil
}

// valueConsumed reports whether a decoder can read on after err: a value of
// the wrong type is consumed whole before it is rejected. Any other failure
// (bad syntax, a failed read, a value a custom decoder refused) is taken as
// the end of the stream: reading on could spin on a decoder that repeats its
// error.
func valueConsumed(err error) bool {
	var typeErr *json.UnmarshalTypeError
	return err == nil || errors.As(err, &typeErr)
}

// decodeMember decodes the value of the member name.
func decodeMember[V any](dec *json.Decoder, name string) (V, error) {
	var v V
	if err := dec.Decode(&v); err != nil {
		return v, fmt.Errorf("decode %s: %w", name, err)
	}
	return v, nil
}

// readArray reads a JSON array one element at a time and hands each
// element's JSON to add, which must not retain it and returns an error to
// stop reading. An element
// that fails to decode (bad syntax) goes to bad instead, which does the same.
func readArray(dec *json.Decoder, add func(json.RawMessage) error, bad func(error) error) error {
	tok, err := dec.Token()
	switch {
	case err != nil:
		return err
	case tok == nil:
		// The vendor's clients read a null list as an empty one.
		return nil
	case tok != json.Delim('['):
		return errors.New("result is not an array")
	}
	// One buffer for every element: Decode appends to its start, and add
	// keeps nothing of it (an item is read, scrubbed and encoded from it),
	// so a list of millions of items does not copy each into a new one.
	var raw json.RawMessage
	for dec.More() {
		raw = raw[:0]
		if err := dec.Decode(&raw); err != nil {
			if err := bad(fmt.Errorf("decode result item: %w", err)); err != nil {
				return err
			}
			continue
		}
		if err := add(raw); err != nil {
			return err
		}
	}
	_, err = dec.Token() // the closing bracket, or the error that broke the stream
	return err
}

// skipValue reads past one JSON value of any size without keeping it: only
// one token at a time is held. Each token is charged to work.
func skipValue(dec *json.Decoder, work *lenient.Work) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if err := work.Charge(tokenWork); err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// tokenWork is what reading one token of a skipped member costs: a
// decoder's Token allocates its value, whatever its size.
const tokenWork = 32

// cleanRequestID is the envelope's request ID as an error would quote it:
// scrubbed, and bounded however long the cloud made it.
func cleanRequestID(s *redact.Scrubber, id string) string {
	if s == nil {
		return id
	}
	return s.Clean(id)
}

// scrubbed is text scrubbed of the call's credential (s nil: none).
func scrubbed(s *redact.Scrubber, text string) string {
	if s == nil {
		return text
	}
	return s.Redact(text)
}

// expectEnd fails if anything but white space follows the envelope.
func expectEnd(dec *json.Decoder) error {
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err == nil {
			err = errors.New("data after the envelope")
		}
		return err
	}
	return nil
}
