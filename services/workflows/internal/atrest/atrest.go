// Package atrest seals what a workflow holds from a secret before it is stored, and opens
// it on reading, the same for every store (mongostore, sqlitestore): the default and value
// of password parameters, the values of tasks' secret params and the default and value of
// their forms' password fields, each stored as the JSON string of its sealed JSON text.
package atrest

import (
	"encoding/json"
	"fmt"

	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// Sealer seals values for storage and opens them again; *secrets.Box (AES-256-GCM under
// BATON_SECRET_KEY) is one.
type Sealer = secrets.Sealer

func isPassword(p domain.Param) bool { return p.Type == "password" }

// SealParams returns params with their password parameters' default and value sealed.
func SealParams(box Sealer, params []domain.Param) ([]domain.Param, error) {
	return secrets.SealFields(box, params, isPassword, paramValues, paramName)
}

// OpenParams reverses SealParams in place. A value this key cannot open reads as the mask,
// which every answer shows for it anyway.
func OpenParams(box Sealer, params []domain.Param) {
	secrets.OpenFields(box, params, isPassword, paramValues)
}

func paramValues(p *domain.Param) []*json.RawMessage { return []*json.RawMessage{&p.Default, &p.Value} }

func paramName(p domain.Param) string { return "parameter " + p.Name }

// SealTaskSecrets returns tasks with the values of their secret params, and the default
// and value of their forms' password fields, sealed, each as SealParams stores a password
// parameter's. A sealed value marks its param secret when read (domain.TaskParam).
func SealTaskSecrets(box Sealer, tasks []domain.Task) ([]domain.Task, error) {
	tasks, _, err := domain.MapSecretParams(tasks, func(task, param string, v json.RawMessage) (json.RawMessage, error) {
		sealed, err := secrets.SealJSON(box, v)
		if err != nil {
			return nil, fmt.Errorf("seal param %s of task %s: %w", param, task, err)
		}
		return sealed, nil
	})
	if err != nil {
		return nil, err
	}
	tasks, _, err = domain.MapFormSecrets(tasks, func(s domain.FormSecret, v json.RawMessage) (json.RawMessage, error) {
		sealed, err := secrets.SealJSON(box, v)
		if err != nil {
			return nil, fmt.Errorf("seal field %s of task %s: %w", s.Field, s.Task, err)
		}
		return sealed, nil
	})
	return tasks, err
}

// OpenTaskSecrets reverses SealTaskSecrets; the params it opens stay marked secret.
func OpenTaskSecrets(box Sealer, tasks []domain.Task) []domain.Task {
	tasks, _, _ = domain.MapSecretParams(tasks, func(_, _ string, v json.RawMessage) (json.RawMessage, error) {
		return secrets.OpenJSON(box, v), nil
	})
	tasks, _, _ = domain.MapFormSecrets(tasks, func(_ domain.FormSecret, v json.RawMessage) (json.RawMessage, error) {
		return secrets.OpenJSON(box, v), nil
	})
	return tasks
}
