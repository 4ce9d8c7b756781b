package domain

import (
	"bytes"
	"encoding/json"

	"github.com/baton-flow/baton/libs/secrets"
)

// Mask stands for a password parameter's default or value in every public answer; a write
// sending it back means "keep the stored value" (API.md §2).
const Mask = secrets.Mask

var maskJSON = json.RawMessage(`"` + Mask + `"`)

// IsSecret reports whether p holds a secret: a password parameter's default and value are
// sealed at rest and masked in answers.
func IsSecret(p Param) bool { return p.Type == "password" }

// MaskSecrets hides the default and value of t's password parameters. Baton's services
// resolving a task for a run get it unmasked; every other answer is masked.
func (t *Task) MaskSecrets() {
	if !hasSecrets(t.Spec.Params) {
		return
	}
	t.Spec.Params = append([]Param(nil), t.Spec.Params...)
	for i, p := range t.Spec.Params {
		if !IsSecret(p) {
			continue
		}
		if !IsAbsent(p.Default) {
			t.Spec.Params[i].Default = maskJSON
		}
		if !IsAbsent(p.Value) {
			t.Spec.Params[i].Value = maskJSON
		}
	}
}

// KeepSecrets puts back the stored default and value of the password parameters that a
// write sent as the mask or left out, from prev, the parameters of the version it follows
// or replaces (none for a new task: the mask is then no value and is dropped). A parameter
// is the same one when it keeps its name and stays a password.
func (t *Task) KeepSecrets(prev []Param) {
	if !hasSecrets(t.Spec.Params) {
		return
	}
	old := map[string]Param{}
	for _, p := range prev {
		if IsSecret(p) {
			old[p.Name] = p
		}
	}
	t.Spec.Params = append([]Param(nil), t.Spec.Params...)
	for i, p := range t.Spec.Params {
		if !IsSecret(p) {
			continue
		}
		if isMask(p.Default) || IsAbsent(p.Default) {
			t.Spec.Params[i].Default = bytes.Clone(old[p.Name].Default)
		}
		if isMask(p.Value) || IsAbsent(p.Value) {
			t.Spec.Params[i].Value = bytes.Clone(old[p.Name].Value)
		}
	}
}

func hasSecrets(params []Param) bool {
	for _, p := range params {
		if IsSecret(p) {
			return true
		}
	}
	return false
}

func isMask(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), maskJSON) }
