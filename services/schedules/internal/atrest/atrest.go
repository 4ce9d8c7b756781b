// Package atrest is how every store of the schedules service keeps a schedule's params:
// as JSON text, sealed, since they may hold the workflow's passwords. Params' names are the
// workflow's, free text, which is why they are kept as text rather than as fields.
package atrest

import (
	"encoding/json"
	"fmt"

	"github.com/baton-flow/baton/libs/secrets"
)

// SealParams answers params as stored: their JSON text sealed by box, empty for none.
func SealParams(box secrets.Sealer, params map[string]any) (string, error) {
	if len(params) == 0 {
		return "", nil
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return "", fmt.Errorf("encode params: %w", err)
	}
	return box.Seal(string(raw))
}

// OpenParams reads what SealParams stored; text stored in clear (by an earlier version)
// reads as it is.
func OpenParams(box secrets.Sealer, text string) (map[string]any, error) {
	if secrets.IsSealed(text) {
		var err error
		if text, err = box.Open(text); err != nil {
			return nil, err
		}
	}
	if text == "" {
		return nil, nil
	}
	var params map[string]any
	if err := json.Unmarshal([]byte(text), &params); err != nil {
		return nil, fmt.Errorf("decode params: %w", err)
	}
	return params, nil
}
