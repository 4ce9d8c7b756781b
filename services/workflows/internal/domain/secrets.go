package domain

import (
	"bytes"
	"encoding/json"

	"github.com/baton-flow/baton/libs/secrets"
)

// Mask stands for a password parameter's value in every response; a write sending it back
// means "keep the stored value" (API.md §2).
const Mask = secrets.Mask

var maskJSON = json.RawMessage(`"` + Mask + `"`)

func secret(p Param) bool { return p.Type == "password" }

// MaskSecrets hides the default and value of w's password parameters, the values its
// tasks give to password params, and the defaults and values of the password fields of its
// manual tasks' forms.
func (w *Workflow) MaskSecrets() {
	w.maskTaskSecrets()
	if !hasSecrets(w.Params) {
		return
	}
	w.Params = append([]Param(nil), w.Params...)
	for i, p := range w.Params {
		if !secret(p) {
			continue
		}
		if present(p.Default) {
			w.Params[i].Default = maskJSON
		}
		if present(p.Value) {
			w.Params[i].Value = maskJSON
		}
	}
}

// HasMaskedSecrets reports whether a write sent the mask for a password parameter, a
// task's password param or a form's password field.
func (w *Workflow) HasMaskedSecrets() bool {
	if w.HasMaskedTaskSecrets() {
		return true
	}
	for _, p := range w.Params {
		if secret(p) && (isMask(p.Default) || isMask(p.Value)) {
			return true
		}
	}
	return false
}

// KeepSecrets puts back the stored values of password parameters that a write sent as the
// mask, from prev, the version it replaces or follows.
func (w *Workflow) KeepSecrets(prev []Param) {
	if !hasSecrets(w.Params) {
		return
	}
	old := map[string]Param{}
	for _, p := range prev {
		old[p.Name] = p
	}
	w.Params = append([]Param(nil), w.Params...)
	for i, p := range w.Params {
		if !secret(p) {
			continue
		}
		if isMask(p.Default) {
			w.Params[i].Default = old[p.Name].Default
		}
		if isMask(p.Value) {
			w.Params[i].Value = old[p.Name].Value
		}
	}
}

func hasSecrets(params []Param) bool {
	for _, p := range params {
		if secret(p) {
			return true
		}
	}
	return false
}

func isMask(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), maskJSON) }
