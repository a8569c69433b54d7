package lenient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// FirstByte returns the first non-space byte of a JSON value, or 0: what
// kind of value it is.
func FirstByte(raw json.RawMessage) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// Object reads raw as a JSON object, and reports whether it is one.
func Object(raw []byte) (map[string]json.RawMessage, bool) {
	if FirstByte(raw) != '{' {
		return nil, false
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, false
	}
	return obj, true
}

// String reads raw as a JSON string, as it is, without sanitizing it, and
// reports whether it is one.
func String(raw []byte) (string, bool) {
	if FirstByte(raw) != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// ReadObject reads a JSON object from dec, calling member for each member
// name; member must consume the value. The members of a large object are
// read one at a time, never held together.
func ReadObject(dec *json.Decoder, member func(name string) error) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != json.Delim('{') {
		return errors.New("the response is not a JSON object")
	}
	return ReadMembers(dec, member)
}

// ReadMembers reads the members of an object whose opening brace dec has
// read, up to its closing one, calling member for each member name; member
// must consume the value.
func ReadMembers(dec *json.Decoder, member func(name string) error) error {
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		// Inside an object the decoder yields only string names here.
		name, ok := tok.(string)
		if !ok {
			return fmt.Errorf("unexpected %v where a member name belongs", tok)
		}
		if err := member(name); err != nil {
			return err
		}
	}
	_, err := dec.Token() // the closing brace
	return err
}
