package mongostore

import "encoding/json"

// jsonText answers v as JSON text, empty for nothing.
func jsonText(v map[string]any) (string, error) {
	if len(v) == 0 {
		return "", nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// fromJSONText reads what jsonText wrote.
func fromJSONText(s string) (map[string]any, error) {
	if s == "" {
		return nil, nil
	}
	var v map[string]any
	err := json.Unmarshal([]byte(s), &v)
	return v, err
}
