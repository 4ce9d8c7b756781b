package domain

import (
	"encoding/json"
	"slices"

	"github.com/baton-flow/baton/libs/secrets"
)

// A value a workflow task gives a param that its catalogue task declares `password` is a
// secret as a workflow's password params are: sealed at rest, masked in answers, kept when
// a write sends the mask back. The catalogue is asked on save only: the value's being
// sealed at rest is what marks it afterwards.

// MarkSecretParams marks the params of t that def, its catalogue task, declares password.
func MarkSecretParams(t *Task, def TaskDefinition) {
	for j, p := range t.Params {
		i := slices.IndexFunc(def.Params, func(d Param) bool { return d.Name == p.Name })
		if i >= 0 && secret(def.Params[i]) {
			t.Params[j].Secret = true
		}
	}
}

// IsSecret reports whether p is a secret param: marked, or read sealed as stored.
func (p TaskParam) IsSecret() bool {
	if p.Secret {
		return true
	}
	if !secrets.HoldsSealed(p.Value) {
		return false // the search spares decoding every value of every task
	}
	var s string
	return json.Unmarshal(p.Value, &s) == nil && secrets.IsSealed(s)
}

// MapSecretParams returns tasks with the present values of their secret params replaced
// by what fn returns for them, marked Secret, and whether that changed any. tasks itself
// is left alone: the tasks changed are copies.
func MapSecretParams(tasks []Task, fn func(task, param string, v json.RawMessage) (json.RawMessage, error)) ([]Task, bool, error) {
	out, found := tasks, false
	for i, t := range tasks {
		var params []TaskParam
		for j, p := range t.Params {
			if !present(p.Value) || !p.IsSecret() {
				continue
			}
			v, err := fn(t.Name, p.Name, p.Value)
			if err != nil {
				return nil, false, err
			}
			if string(v) == string(p.Value) && p.Secret {
				continue
			}
			if params == nil {
				params = slices.Clone(t.Params)
			}
			params[j].Value, params[j].Secret = v, true
		}
		if params == nil {
			continue
		}
		if !found {
			out, found = slices.Clone(tasks), true
		}
		out[i].Params = params
	}
	return out, found, nil
}

// maskTaskSecrets hides the secrets of w's tasks, its forms' included. Of tasks read as
// stored, only those that may hold one are decoded and written again: a workflow holding
// none costs a search of its bytes, one holding some a split of its tasks besides.
func (w *Workflow) maskTaskSecrets() {
	if w.Tasks != nil || len(w.RawTasks) == 0 {
		if tasks, changed := maskTasks(w.Tasks); changed {
			w.Tasks = tasks
		}
		return
	}
	if !mayHoldSecret(w.RawTasks) {
		return
	}
	var items []json.RawMessage
	if json.Unmarshal(w.RawTasks, &items) != nil {
		return
	}
	changed := false
	for i, item := range items {
		if !mayHoldSecret(item) {
			continue
		}
		var t Task
		if json.Unmarshal(item, &t) != nil {
			continue
		}
		masked, ok := maskTasks([]Task{t})
		if !ok {
			continue
		}
		raw, err := json.Marshal(masked[0])
		if err != nil {
			continue
		}
		items[i], changed = raw, true
	}
	if !changed {
		return
	}
	out := append(make([]byte, 0, len(w.RawTasks)+len(items)*8), '[')
	for i, item := range items {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, item...)
	}
	w.RawTasks = append(out, ']')
}

// mayHoldSecret reports whether tasks as JSON may hold a secret: a value sealed as stored,
// or a form's password field.
func mayHoldSecret(raw []byte) bool { return secrets.HoldsSealed(raw) || mayHoldPasswordField(raw) }

// maskTasks returns tasks with their secrets masked, and whether there were any.
func maskTasks(tasks []Task) ([]Task, bool) {
	mask := func(string, string, json.RawMessage) (json.RawMessage, error) { return maskJSON, nil }
	tasks, params, _ := MapSecretParams(tasks, mask)
	tasks, forms, _ := MapFormSecrets(tasks, func(FormSecret, json.RawMessage) (json.RawMessage, error) { return maskJSON, nil })
	return tasks, params || forms
}

// HasMaskedTaskSecrets reports whether a write sent the mask for a secret param of a task
// or a secret of a form.
func (w *Workflow) HasMaskedTaskSecrets() bool {
	for _, t := range w.Tasks {
		for _, p := range t.Params {
			if p.Secret && isMask(p.Value) {
				return true
			}
		}
	}
	return w.hasMaskedFormSecrets()
}

// KeepTaskSecrets puts back the stored secrets of tasks, their forms' included, that a
// write sent as the mask, from prev, the tasks of the version it replaces or follows:
// those of the same param of the same task. A mask with nothing to keep is no value.
func (w *Workflow) KeepTaskSecrets(prev []Task) {
	old := map[[2]string]json.RawMessage{}
	for _, t := range prev {
		for _, p := range t.Params {
			old[[2]string{t.Name, p.Name}] = p.Value
		}
	}
	cloned := false
	for i, t := range w.Tasks {
		if !slices.ContainsFunc(t.Params, func(p TaskParam) bool { return p.Secret && isMask(p.Value) }) {
			continue
		}
		t.Params = slices.Clone(t.Params)
		for j, p := range t.Params {
			if p.Secret && isMask(p.Value) {
				t.Params[j].Value = old[[2]string{t.Name, p.Name}]
			}
		}
		if !cloned {
			w.Tasks, cloned = slices.Clone(w.Tasks), true
		}
		w.Tasks[i] = t
	}
	w.keepFormSecrets(prev)
}
