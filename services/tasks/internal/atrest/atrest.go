// Package atrest is how the tasks service's stores keep a task's body: its JSON text
// (taskjson), with the default and value of each password parameter sealed (each as the
// JSON string of its sealed JSON text), and opened on reading. The Mongo store and the
// SQLite one share it, so that both files hold the same.
package atrest

import (
	"encoding/json"
	"fmt"

	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/tasks/internal/domain"
	"github.com/baton-flow/baton/services/tasks/internal/taskjson"
)

// Sealer seals values for storage and opens them again; *secrets.Box (AES-256-GCM under
// BATON_SECRET_KEY) is one.
type Sealer = secrets.Sealer

// Encode is the stored body of t: its JSON text with password parameters sealed.
func Encode(box Sealer, t domain.Task) ([]byte, error) {
	params, err := secrets.SealFields(box, t.Spec.Params, domain.IsSecret, paramValues, paramName)
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", t.Ref(), err)
	}
	t.Spec.Params = params
	return taskjson.Encode(t)
}

// Decode reads a stored body, opening its password parameters. A value this key cannot
// open reads as the mask, which every public answer shows for it anyway. Values stored
// before sealing began are read as they are, and sealed at their next write.
func Decode(box Sealer, body []byte) (domain.Task, error) {
	t, err := taskjson.DecodeStored(body)
	if err != nil {
		return domain.Task{}, err
	}
	secrets.OpenFields(box, t.Spec.Params, domain.IsSecret, paramValues)
	return t, nil
}

func paramValues(p *domain.Param) []*json.RawMessage { return []*json.RawMessage{&p.Default, &p.Value} }

func paramName(p domain.Param) string { return "parameter " + p.Name }
