package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// DecodeParams reads params sent as the contract's list of {name, value} or, as older
// clients send them, as an object of name to value. Absent or null is none. A list item
// without a name, or a name given twice, is refused.
func DecodeParams(raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	switch raw[0] {
	case '{':
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, &ErrRequest{Message: "params are not valid JSON.", Fields: map[string]string{"params": err.Error()}}
		}
		return m, nil
	case '[':
		var list []struct {
			Name  *string `json:"name"`
			Value any     `json:"value"`
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, &ErrRequest{Message: "params must be a list of {name, value} or an object of name to value.",
				Fields: map[string]string{"params": err.Error()}}
		}
		m := make(map[string]any, len(list))
		for i, p := range list {
			field := fmt.Sprintf("params[%d].name", i)
			if p.Name == nil || *p.Name == "" {
				return nil, &ErrRequest{Message: "Every param needs a name.", Fields: map[string]string{field: "is required"}}
			}
			if _, dup := m[*p.Name]; dup {
				return nil, &ErrRequest{Message: fmt.Sprintf("The param '%s' is given twice.", *p.Name), Fields: map[string]string{field: "is given twice"}}
			}
			m[*p.Name] = p.Value
		}
		return m, nil
	}
	return nil, &ErrRequest{Message: "params must be a list of {name, value} or an object of name to value.",
		Fields: map[string]string{"params": "must be a list or an object"}}
}
