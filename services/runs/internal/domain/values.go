package domain

import (
	"encoding/json"
	"errors"

	"github.com/baton-flow/baton/libs/param"
)

// DecodeParams reads params sent as the contract's list of {name, value} or, as older
// clients send them, as an object of name to value (param.DecodeValues).
func DecodeParams(raw json.RawMessage) (map[string]any, error) {
	m, err := param.DecodeValues(raw)
	var ve *param.ValuesError
	if errors.As(err, &ve) {
		return nil, &ErrRequest{Message: ve.Message, Fields: map[string]string{ve.Field: ve.Reason}}
	}
	return m, err
}
