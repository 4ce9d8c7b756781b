package mongostore

import (
	"encoding/json"
	"fmt"

	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/tasks/internal/domain"
	"github.com/baton-flow/baton/services/tasks/internal/taskjson"
)

// Sealer seals values for storage and opens them again; *secrets.Box (AES-256-GCM under
// BATON_SECRET_KEY) is one. The default and value of a password parameter are stored
// sealed, each as the JSON string of its sealed JSON text, and opened on reading.
type Sealer = secrets.Sealer

// encode is the stored body of t: its JSON text with password parameters sealed.
func (s *Tasks) encode(t domain.Task) ([]byte, error) {
	params, err := sealParams(s.box, t.Spec.Params)
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", t.Ref(), err)
	}
	t.Spec.Params = params
	return taskjson.Encode(t)
}

// decode reads a stored body, opening its password parameters.
func (s *Tasks) decode(body string) (domain.Task, error) {
	t, err := taskjson.DecodeStored([]byte(body))
	if err != nil {
		return domain.Task{}, err
	}
	openParams(s.box, t.Spec.Params)
	return t, nil
}

// sealParams returns params with their password parameters' default and value sealed.
func sealParams(box Sealer, params []domain.Param) ([]domain.Param, error) {
	return secrets.SealFields(box, params, domain.IsSecret, paramValues, paramName)
}

// openParams reverses sealParams in place. A value this key cannot open reads as the mask,
// which every public answer shows for it anyway. Values stored before sealing began are
// read as they are, and sealed at their next write.
func openParams(box Sealer, params []domain.Param) {
	secrets.OpenFields(box, params, domain.IsSecret, paramValues)
}

func paramValues(p *domain.Param) []*json.RawMessage { return []*json.RawMessage{&p.Default, &p.Value} }

func paramName(p domain.Param) string { return "parameter " + p.Name }
