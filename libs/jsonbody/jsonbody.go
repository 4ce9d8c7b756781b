// Package jsonbody reads JSON texts the one way every Baton service reads a request body,
// a webhook's payload, an event's data or a stored value: a text holds exactly one JSON
// value, with white space around it at most. What follows the value is refused, never
// dropped: `{"x":1}}}garbage` is not `{"x":1}`.
//
// encoding/json's Decoder stops after the first value, and its More reports false before a
// stray `}` or `]`, so a decoder checked with More alone takes such a text; Decode and
// DecodeNumbers check the rest of the text themselves.
package jsonbody

import (
	"bytes"
	"encoding/json"
	"errors"
)

// ErrTrailing marks a text with data after its JSON value.
var ErrTrailing = errors.New("data after the JSON value")

// ErrEmpty marks a text without a JSON value.
var ErrEmpty = errors.New("no JSON value")

// Decode reads the one JSON value of raw into v, as json.Unmarshal does.
func Decode(raw []byte, v any) error { return decode(raw, v, false) }

// DecodeNumbers reads the one JSON value of raw into v, numbers kept exact as json.Number
// where v leaves their type open.
func DecodeNumbers(raw []byte, v any) error { return decode(raw, v, true) }

// Check reports why raw is not exactly one JSON value, nil when it is.
func Check(raw []byte) error {
	var v json.RawMessage
	return decode(raw, &v, false)
}

// IsNull reports whether raw is the JSON value null.
func IsNull(raw []byte) bool { return string(bytes.Trim(raw, space)) == "null" }

// space is JSON's white space.
const space = " \t\r\n"

func decode(raw []byte, v any, numbers bool) error {
	if len(bytes.Trim(raw, space)) == 0 {
		return ErrEmpty
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if numbers {
		dec.UseNumber()
	}
	if err := dec.Decode(v); err != nil {
		return err
	}
	if len(bytes.Trim(raw[dec.InputOffset():], space)) > 0 {
		return ErrTrailing
	}
	return nil
}
