// Package atrest seals, for storage, what the runs service keeps from secrets, and opens it
// again on reading: every store of the service (mongostore, sqlitestore) keeps the same
// values sealed, so that neither a database nor a file holds a secret in clear.
package atrest

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Sealer seals values for storage and opens them again; *secrets.Box (AES-256-GCM under
// BATON_SECRET_KEY) is one.
//
// What a run holds from a secret is stored sealed, never in clear: the values of the
// global and team password parameters in its context and the list of secret values it
// masks, its params and results named secret, and each task run's params, results and
// decision named secret (the domain names them by where they came from). The password
// parameters' defaults are left out of the stored definition: a run has their values in
// its params already; what its catalogue tasks hold for their password parameters is
// stored sealed in it.
type Sealer interface {
	Seal(plain string) (string, error)
	Open(sealed string) (string, error)
}

// Seal seals s. Sealing fails only when the system's randomness does; the mask is stored
// then, so that a secret is lost rather than written in clear.
func Seal(box Sealer, s string) string {
	if box == nil {
		return secrets.Mask
	}
	out, err := box.Seal(s)
	if err != nil {
		return secrets.Mask
	}
	return out
}

// Open opens a sealed s; anything else, or a value this key does not open (it then shows
// as the mask it is shown as anyway), is returned as it is.
func Open(box Sealer, s string) string {
	if box == nil || !secrets.IsSealed(s) {
		return s
	}
	out, err := box.Open(s)
	if err != nil {
		return s
	}
	return out
}

// sealValue seals a JSON value as the text of its encoding.
func sealValue(box Sealer, v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return secrets.Mask
	}
	return Seal(box, string(raw))
}

// openValue reverses sealValue.
func openValue(box Sealer, v any) any {
	s, ok := v.(string)
	if !ok || !secrets.IsSealed(s) {
		return v
	}
	plain := Open(box, s)
	if plain == s {
		return s
	}
	var out any
	if json.Unmarshal([]byte(plain), &out) != nil {
		return s
	}
	return out
}

// sealNamed returns m with the values named secret sealed by seal, m itself untouched.
func sealNamed[V any](m map[string]V, secret []string, seal func(V) V) map[string]V {
	if len(secret) == 0 || len(m) == 0 {
		return m
	}
	out := maps.Clone(m)
	for _, name := range secret {
		if v, ok := out[name]; ok {
			out[name] = seal(v)
		}
	}
	return out
}

// openNamed reverses sealNamed, in place.
func openNamed[V any](m map[string]V, secret []string, open func(V) V) map[string]V {
	for _, name := range secret {
		if v, ok := m[name]; ok {
			m[name] = open(v)
		}
	}
	return m
}

// SealValues returns m with the values named secret sealed.
func SealValues(box Sealer, m map[string]any, secret []string) map[string]any {
	return sealNamed(m, secret, func(v any) any { return sealValue(box, v) })
}

// OpenValues reverses sealValues, in place.
func OpenValues(box Sealer, m map[string]any, secret []string) map[string]any {
	return openNamed(m, secret, func(v any) any { return openValue(box, v) })
}

// SealTexts is sealValues for text values.
func SealTexts(box Sealer, m map[string]string, secret []string) map[string]string {
	return sealNamed(m, secret, func(v string) string { return Seal(box, v) })
}

// OpenTexts reverses sealTexts, in place.
func OpenTexts(box Sealer, m map[string]string, secret []string) map[string]string {
	return openNamed(m, secret, func(v string) string { return Open(box, v) })
}

// SealContext returns rc with its password parameters' values and its secret values
// sealed.
func SealContext(box Sealer, rc domain.RunContext) domain.RunContext {
	global, team := layerSecrets(rc.SecretNames)
	rc.Global = SealValues(box, rc.Global, global)
	rc.Team = SealValues(box, rc.Team, team)
	if len(rc.Secrets) > 0 {
		sealed := make([]string, len(rc.Secrets))
		for i, s := range rc.Secrets {
			sealed[i] = Seal(box, s)
		}
		rc.Secrets = sealed
	}
	if rc.CallbackToken != "" {
		rc.CallbackToken = Seal(box, rc.CallbackToken)
	}
	return rc
}

// OpenContext reverses sealContext.
func OpenContext(box Sealer, rc domain.RunContext) domain.RunContext {
	global, team := layerSecrets(rc.SecretNames)
	rc.Global = OpenValues(box, rc.Global, global)
	rc.Team = OpenValues(box, rc.Team, team)
	for i, s := range rc.Secrets {
		rc.Secrets[i] = Open(box, s)
	}
	if rc.CallbackToken != "" {
		rc.CallbackToken = Open(box, rc.CallbackToken)
	}
	return rc
}

// layerSecrets splits a context's secret names ("global.<name>", "team.<name>") by layer.
func layerSecrets(names []string) (global, team []string) {
	for _, n := range names {
		if name, ok := strings.CutPrefix(n, "global."); ok {
			global = append(global, name)
		} else if name, ok := strings.CutPrefix(n, "team."); ok {
			team = append(team, name)
		}
	}
	return global, team
}

// WithoutSecrets returns def without the values and defaults of its password parameters,
// for storage: a run takes them into its params when it is made, and a retry takes them
// from the params of the run it retries.
func WithoutSecrets(def *domain.Definition) *domain.Definition {
	if def == nil || !slices.ContainsFunc(def.Params, IsPassword) {
		return def
	}
	out := *def
	out.Params = slices.Clone(def.Params)
	for i, p := range out.Params {
		if IsPassword(p) {
			out.Params[i].Value, out.Params[i].Default = nil, nil
		}
	}
	return &out
}

func IsPassword(p domain.Param) bool { return p.Type == "password" }

// SealTaskSecrets returns def with what its catalogue tasks hold for a password
// parameter sealed: the spec's default and value, and the value the workflow gives it.
// It reports false, def unchanged, when there is none. A run's params take a workflow's
// own password parameters, so they leave the stored definition (withoutSecrets); a
// catalogue task's are read from the definition when the task starts, so they stay,
// sealed.
func SealTaskSecrets(box Sealer, def *domain.Definition) (*domain.Definition, bool) {
	if def == nil {
		return def, false
	}
	var out *domain.Definition
	for i, t := range def.Tasks {
		secret := passwordParams(t.Spec)
		forms := secretForms(t)
		if len(secret) == 0 && len(forms) == 0 {
			continue
		}
		if out == nil {
			clone := *def
			clone.Tasks = slices.Clone(def.Tasks)
			out = &clone
		}
		task := t
		if len(secret) > 0 {
			spec := *t.Spec
			spec.Params = slices.Clone(spec.Params)
			for j, p := range spec.Params {
				if p.Type == "password" {
					spec.Params[j].Default, spec.Params[j].Value = SealRaw(box, p.Default), SealRaw(box, p.Value)
				}
			}
			task.Spec = &spec
		}
		secret = append(secret, forms...)
		task.Params = slices.Clone(t.Params)
		for j, p := range task.Params {
			if slices.Contains(secret, p.Name) {
				task.Params[j].Value = SealRaw(box, p.Value)
			}
		}
		out.Tasks[i] = task
	}
	return cmp.Or(out, def), out != nil
}

// OpenTaskSecrets reverses sealTaskSecrets, in place.
func OpenTaskSecrets(box Sealer, def *domain.Definition) {
	for i, t := range def.Tasks {
		secret := passwordParams(t.Spec)
		if len(secret) > 0 {
			for j, p := range t.Spec.Params {
				if p.Type == "password" {
					t.Spec.Params[j].Default, t.Spec.Params[j].Value = secrets.OpenJSON(box, p.Default), secrets.OpenJSON(box, p.Value)
				}
			}
		}
		if t.Type == tasktype.Manual {
			// A form is sealed when it holds a secret (secretForms); any other reads as it is.
			secret = append(secret, formParams...)
		}
		if len(secret) == 0 {
			continue
		}
		for j, p := range t.Params {
			if slices.Contains(secret, p.Name) {
				def.Tasks[i].Params[j].Value = secrets.OpenJSON(box, p.Value)
			}
		}
	}
}

// formParams are the params a manual task's form may be given in.
var formParams = []string{"params", "form"}

// secretForms names the params of manual task t that give its form: those whose form gives
// a password field a default or a value, which are sealed as a whole.
func secretForms(t domain.TaskDef) []string {
	if t.Type != tasktype.Manual {
		return nil
	}
	var out []string
	for _, p := range t.Params {
		if !slices.Contains(formParams, p.Name) {
			continue
		}
		var v any
		if json.Unmarshal(p.Value, &v) == nil && domain.FormHoldsSecret(v) {
			out = append(out, p.Name)
		}
	}
	return out
}

// passwordParams names the password parameters of a catalogue task's spec.
func passwordParams(spec *domain.Spec) []string {
	if spec == nil {
		return nil
	}
	var out []string
	for _, p := range spec.Params {
		if p.Type == "password" {
			out = append(out, p.Name)
		}
	}
	return out
}

// SealRaw seals a JSON value, stored as the JSON string of the sealed text; nothing stays
// nothing.
func SealRaw(box Sealer, raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return raw
	}
	out, _ := json.Marshal(Seal(box, string(raw)))
	return out
}

// SealForm returns form with its password parameters' default and value sealed, form
// itself untouched.
func SealForm(box Sealer, form []domain.Param) []domain.Param {
	out := slices.Clone(form)
	for i, p := range out {
		if IsPassword(p) {
			out[i].Default, out[i].Value = SealRaw(box, p.Default), SealRaw(box, p.Value)
		}
	}
	return out
}

// OpenRaw reverses SealRaw.
func OpenRaw(box Sealer, raw json.RawMessage) json.RawMessage {
	if box == nil {
		return raw
	}
	return secrets.OpenJSON(box, raw)
}

// OpenForm reverses SealForm, in place.
func OpenForm(box Sealer, form []domain.Param) []domain.Param {
	for i, p := range form {
		if IsPassword(p) {
			form[i].Default, form[i].Value = OpenRaw(box, p.Default), OpenRaw(box, p.Value)
		}
	}
	return form
}
