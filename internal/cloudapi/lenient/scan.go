package lenient

import (
	"encoding/json"
	"errors"
)

// The member-by-member reader splits an object into its members, and an
// array into its elements, once per level of nesting it reads. It did so
// with a json.Decoder per object and a decoded json.RawMessage per member,
// which allocate a decoder, a buffer and a copy of every value: for an item
// of hundreds of members, most of the work of reading it. The values it
// splits have already been read whole by the list's decoder, so they are
// valid JSON and a scan for where each value ends is enough: no copy, no
// allocation but the member's name. The scan still checks the shape it
// walks, and stops with errMalformed rather than read past the end.

// errMalformed is the error of a value the scan cannot split; the list's
// decoder never hands one over.
var errMalformed = errors.New("malformed JSON value")

// eachMember calls f for each member of the JSON object raw, in order, with
// the member's name and its value as sent (no surrounding white space).
func eachMember(raw []byte, f func(name string, value json.RawMessage)) error {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return errMalformed
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return nil
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return errMalformed
		}
		end := stringEnd(raw, i)
		name, err := memberName(raw[i:end])
		if err != nil {
			return err
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return errMalformed
		}
		i = skipSpace(raw, i+1)
		valueEnd := valueEnd(raw, i)
		if valueEnd <= i {
			return errMalformed
		}
		f(name, raw[i:valueEnd])
		var done bool
		if i, done, err = after(raw, valueEnd, '}'); err != nil || done {
			return err
		}
	}
}

// eachElement calls f for each element of the JSON array raw, in order.
func eachElement(raw []byte, f func(i int, value json.RawMessage)) error {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return errMalformed
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return nil
	}
	for n := 0; ; n++ {
		end := valueEnd(raw, i)
		if end <= i {
			return errMalformed
		}
		f(n, raw[i:end])
		var done bool
		var err error
		if i, done, err = after(raw, end, ']'); err != nil || done {
			return err
		}
	}
}

// after reads what follows a member or an element ending at raw[end]: a
// comma, and then i is where the next one starts; or closing, which ends
// the object or array (done).
func after(raw []byte, end int, closing byte) (i int, done bool, err error) {
	if i = skipSpace(raw, end); i >= len(raw) {
		return 0, false, errMalformed
	}
	switch raw[i] {
	case ',':
		return skipSpace(raw, i+1), false, nil
	case closing:
		return i, true, nil
	}
	return 0, false, errMalformed
}

// memberName is the name a JSON string quoted holds. Names of plain ASCII
// without escapes, nearly all of them, are taken as they are; others are
// decoded by encoding/json, which also replaces invalid UTF-8 as the
// list's decoder did.
func memberName(quoted []byte) (string, error) {
	if len(quoted) < 2 || quoted[len(quoted)-1] != '"' {
		return "", errMalformed
	}
	plain := true
	for _, c := range quoted[1 : len(quoted)-1] {
		if c == '\\' || c >= 0x80 || c < 0x20 {
			plain = false
			break
		}
	}
	if plain {
		return string(quoted[1 : len(quoted)-1]), nil
	}
	var name string
	if err := json.Unmarshal(quoted, &name); err != nil {
		return "", errMalformed
	}
	return name, nil
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(raw []byte, i int) int {
	for i < len(raw) {
		switch raw[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd returns the index just past the JSON string that starts at
// raw[i], a quote; len(raw) when it does not end.
func stringEnd(raw []byte, i int) int {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++ // the escaped byte, a quote or a backslash among them
		case '"':
			return j + 1
		}
	}
	return len(raw)
}

// valueEnd returns the index just past the JSON value that starts at
// raw[i]: a string, an object or array with everything in it, or a literal
// (number, true, false, null), which ends where a delimiter begins.
func valueEnd(raw []byte, i int) int {
	if i >= len(raw) {
		return i
	}
	switch raw[i] {
	case '"':
		return stringEnd(raw, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(raw); j++ {
			switch raw[j] {
			case '"':
				j = stringEnd(raw, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(raw)
	}
	j := i
	for j < len(raw) {
		switch raw[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
		j++
	}
	return j
}
