package param

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ValuesError is a list of values that cannot be read: the field at fault and why.
type ValuesError struct {
	Message string
	Field   string
	Reason  string
}

func (e *ValuesError) Error() string { return e.Message }

// DecodeValues reads parameter values sent as the contract's list of {name, value} or, as
// older clients send them, as an object of name to value (a run's params, a schedule's).
// Absent or null is none. A list item without a name, or a name given twice, is refused.
func DecodeValues(raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	switch raw[0] {
	case '{':
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, &ValuesError{Message: "params are not valid JSON.", Field: "params", Reason: err.Error()}
		}
		return m, nil
	case '[':
		var list []struct {
			Name  *string `json:"name"`
			Value any     `json:"value"`
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, &ValuesError{Message: "params must be a list of {name, value} or an object of name to value.",
				Field: "params", Reason: err.Error()}
		}
		m := make(map[string]any, len(list))
		for i, p := range list {
			field := fmt.Sprintf("params[%d].name", i)
			if p.Name == nil || *p.Name == "" {
				return nil, &ValuesError{Message: "Every param needs a name.", Field: field, Reason: "is required"}
			}
			if _, dup := m[*p.Name]; dup {
				return nil, &ValuesError{Message: fmt.Sprintf("The param '%s' is given twice.", *p.Name), Field: field, Reason: "is given twice"}
			}
			m[*p.Name] = p.Value
		}
		return m, nil
	}
	return nil, &ValuesError{Message: "params must be a list of {name, value} or an object of name to value.",
		Field: "params", Reason: "must be a list or an object"}
}
