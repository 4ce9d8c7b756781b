package domain

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/baton-flow/baton/libs/tasktype"
)

// A manual task's form is given in its `params` param (alias `form`): AbstractParam
// definitions, as a list or as the JSON text of one. A password field's default and value
// are secrets as a workflow's password params are: sealed at rest, masked in answers, kept
// when a write sends the mask back.

// FormParams are the task params a manual task's form may be given in.
var FormParams = []string{"params", "form"}

// FormSecret names one secret of a manual task's form: the default (under `default` or
// v4's `defaultValue`) or the value of one of its password fields.
type FormSecret struct {
	Task, Param, Field string
	// Member is "default" or "value".
	Member string
}

// mayHoldPasswordField reports whether tasks as JSON may give a form's password field a
// default or a value: false for most workflows, found with one search of the bytes, so
// that they are rendered as stored without decoding.
func mayHoldPasswordField(rawTasks []byte) bool {
	return bytes.Contains(rawTasks, []byte("password"))
}

// MapFormSecrets returns tasks with the present secrets of their manual tasks' forms
// replaced by what fn returns for them, and whether that changed any. tasks itself is left
// alone: the tasks changed are copies.
func MapFormSecrets(tasks []Task, fn func(s FormSecret, v json.RawMessage) (json.RawMessage, error)) ([]Task, bool, error) {
	out, found := tasks, false
	for i, t := range tasks {
		if t.Type != tasktype.Manual {
			continue
		}
		var params []TaskParam
		for j, p := range t.Params {
			if !slices.Contains(FormParams, p.Name) {
				continue
			}
			v, changed, err := mapForm(p.Value, func(field, member string, v json.RawMessage) (json.RawMessage, error) {
				return fn(FormSecret{Task: t.Name, Param: p.Name, Field: field, Member: member}, v)
			})
			if err != nil {
				return nil, false, err
			}
			if changed {
				if params == nil {
					params = slices.Clone(t.Params)
				}
				params[j].Value = v
			}
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

// FormSecrets returns the present secrets of the forms of tasks with their values.
func FormSecrets(tasks []Task) map[FormSecret]json.RawMessage {
	out := map[FormSecret]json.RawMessage{}
	_, _, _ = MapFormSecrets(tasks, func(s FormSecret, v json.RawMessage) (json.RawMessage, error) {
		out[s] = v
		return v, nil
	})
	return out
}

// hasMaskedFormSecrets reports whether a write sent the mask for a secret of a form.
func (w *Workflow) hasMaskedFormSecrets() bool {
	for _, v := range FormSecrets(w.Tasks) {
		if isMask(v) {
			return true
		}
	}
	return false
}

// keepFormSecrets puts back the stored secrets of forms that a write sent as the mask,
// from prev, the tasks of the version it replaces or follows: those of the same field of
// the same task. A mask with nothing to keep is no value.
func (w *Workflow) keepFormSecrets(prev []Task) {
	old := map[FormSecret]json.RawMessage{}
	for s, v := range FormSecrets(prev) {
		s.Param = "" // `params` and `form` give the same form
		old[s] = v
	}
	tasks, changed, _ := MapFormSecrets(w.Tasks, func(s FormSecret, v json.RawMessage) (json.RawMessage, error) {
		if !isMask(v) {
			return v, nil
		}
		s.Param = ""
		if kept, ok := old[s]; ok {
			return kept, nil
		}
		return json.RawMessage("null"), nil
	})
	if changed {
		w.Tasks = tasks
	}
}

// mapForm applies fn to the present default and value of each password field of raw, a
// form as a list or as its JSON text, and returns the form rewritten when there were any.
// Anything that is no form is left as it is: validating it is the runs service's part.
func mapForm(raw json.RawMessage, fn func(field, member string, v json.RawMessage) (json.RawMessage, error)) (json.RawMessage, bool, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || !mayHoldPasswordField(raw) {
		return raw, false, nil
	}
	if raw[0] == '"' {
		// A form given as JSON text (a designer's text box) is the JSON it holds.
		var text string
		if json.Unmarshal(raw, &text) != nil {
			return raw, false, nil
		}
		inner, changed, err := mapForm(json.RawMessage(text), fn)
		if err != nil || !changed {
			return raw, false, err
		}
		out, err := json.Marshal(string(inner))
		return out, err == nil, err
	}
	var fields []map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return raw, false, nil
	}
	changed := false
	for _, f := range fields {
		if !isPasswordField(f) {
			continue
		}
		name := fieldName(f)
		for k, v := range f {
			member := secretMember(k)
			if member == "" || !present(v) {
				continue
			}
			nv, err := fn(name, member, v)
			if err != nil {
				return nil, false, err
			}
			if !bytes.Equal(nv, v) {
				f[k], changed = nv, true
			}
		}
	}
	if !changed {
		return raw, false, nil
	}
	out, err := json.Marshal(fields)
	return out, err == nil, err
}

// member reads f's member k as AbstractParam does: its name in any case.
func member(f map[string]json.RawMessage, names ...string) string {
	for k, v := range f {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(k, n) }) {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

func isPasswordField(f map[string]json.RawMessage) bool { return member(f, "type") == "password" }

func fieldName(f map[string]json.RawMessage) string { return member(f, "name", "key") }

// secretMember says which secret a field's member k holds, "" for none.
func secretMember(k string) string {
	switch strings.ToLower(k) {
	case "default", "defaultvalue":
		return "default"
	case "value":
		return "value"
	}
	return ""
}
