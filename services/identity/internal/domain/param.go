package domain

import (
	"encoding/json"
	"fmt"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/secrets"
)

// ParamType is the kind of value a parameter holds, which also tells forms how to edit it.
type ParamType string

// Parameter types (API.md §3, AbstractParam).
const (
	ParamText            ParamType = "text"
	ParamTextArea        ParamType = "textarea"
	ParamEmail           ParamType = "email"
	ParamNumber          ParamType = "number"
	ParamURL             ParamType = "url"
	ParamBoolean         ParamType = "boolean"
	ParamPassword        ParamType = "password"
	ParamSelect          ParamType = "select"
	ParamMultiSelect     ParamType = "multiselect"
	ParamJSON            ParamType = "json"
	ParamTextEditor      ParamType = "texteditor"
	ParamTextEditorJS    ParamType = "texteditor::javascript"
	ParamTextEditorText  ParamType = "texteditor::text"
	ParamTextEditorShell ParamType = "texteditor::shell"
	ParamTextEditorYAML  ParamType = "texteditor::yaml"
)

// paramNameRule says in words what paramName accepts.
const paramNameRule = "letters, digits, '_', '-' and '.', starting with a letter, digit or '_', at most 64"

// ParamTypes lists every parameter type.
var ParamTypes = []ParamType{
	ParamText, ParamTextArea, ParamEmail, ParamNumber, ParamURL, ParamBoolean, ParamPassword,
	ParamSelect, ParamMultiSelect, ParamJSON, ParamTextEditor, ParamTextEditorJS,
	ParamTextEditorText, ParamTextEditorShell, ParamTextEditorYAML,
}

// Valid reports whether t is a known type.
func (t ParamType) Valid() bool { return slices.Contains(ParamTypes, t) }

// stringValued are the types whose value is one string; number, boolean, multiselect and
// json values keep their own JSON shapes.
func (t ParamType) stringValued() bool {
	switch t {
	case ParamNumber, ParamBoolean, ParamMultiSelect, ParamJSON:
		return false
	}
	return true
}

// Option is one choice of a select or multiselect parameter.
type Option struct {
	Key   string
	Value string
}

// Param is a parameter definition with its value: a global parameter here, and the same
// shape for team and workflow parameters. Value and Default hold decoded JSON values (nil,
// string, bool, json.Number, []any, map[string]any).
//
// A password parameter's Value and Default are secrets: stored sealed, never shown (see
// Masked), and kept when a replacement omits them or sends the mask (see KeepSecrets).
type Param struct {
	Name           string
	Label          string
	Description    string
	Type           ParamType
	Default        any
	Value          any
	Required       bool
	Placeholder    string
	HelperText     string
	Options        []Option
	MinValueLength *int
	MaxValueLength *int
	ReadOnly       bool
	HiddenValue    bool
	// Version increases with every change; updates are conditional on it.
	Version int64
}

// Secret reports whether the parameter's value and default are secrets.
func (p Param) Secret() bool { return p.Type == ParamPassword }

// paramName: names appear in `$(global.params.<name>)` references and in paths, so they
// keep to characters needing no escaping in either. Case is kept, like task names.
var paramName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`)

// ErrParamNotFound matches any error of reason PARAMS_NOT_FOUND.
var ErrParamNotFound = apperr.New(apperr.ParamsNotFound, "Parameter was not found.")

// ParamNotFound is the error for a global parameter that does not exist.
func ParamNotFound(name string) error {
	return apperr.New(apperr.ParamsNotFound, "Global parameter '%s' was not found.", name)
}

// ParamExists is the error for creating a parameter under a name already in use.
func ParamExists(name string) error {
	return apperr.New(apperr.ParamsNonUniqueReference, "A global parameter named '%s' already exists.", name)
}

// Normalize validates p, applies defaults (type text) and brings values into their type's
// shape: scalars become strings for string-valued types, "true"/"false" become booleans,
// numeric strings numbers. Every problem is reported at once, as field errors.
func (p *Param) Normalize() error {
	var fields []apperr.FieldError
	bad := func(field, format string, args ...any) {
		fields = append(fields, apperr.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	p.Name = strings.TrimSpace(p.Name)
	if !paramName.MatchString(p.Name) {
		bad("name", "must be %s characters", paramNameRule)
	}
	if p.Type == "" {
		p.Type = ParamText
	}
	if !p.Type.Valid() {
		bad("type", "must be one of %s", joinTypes())
	}
	seen := map[string]bool{}
	for i, o := range p.Options {
		if strings.TrimSpace(o.Key) == "" {
			bad(fmt.Sprintf("options[%d].key", i), "must not be empty")
		} else if seen[o.Key] {
			bad(fmt.Sprintf("options[%d].key", i), "duplicates option '%s'", o.Key)
		}
		seen[o.Key] = true
	}
	if p.MinValueLength != nil && *p.MinValueLength < 0 {
		bad("minValueLength", "must not be negative")
	}
	if p.MaxValueLength != nil && *p.MaxValueLength < 0 {
		bad("maxValueLength", "must not be negative")
	}
	if p.MinValueLength != nil && p.MaxValueLength != nil && *p.MinValueLength > *p.MaxValueLength {
		bad("minValueLength", "must not exceed maxValueLength")
	}
	if len(fields) == 0 {
		var msg string
		if p.Value, msg = p.normalizeValue(p.Value); msg != "" {
			bad("value", "%s", msg)
		}
		if p.Default, msg = p.normalizeValue(p.Default); msg != "" {
			bad("default", "%s", msg)
		}
	}
	if len(fields) > 0 {
		return apperr.Invalid(apperr.RequestInvalid, "The parameter is not valid: "+fields[0].Field+" "+fields[0].Message+".", fields...)
	}
	return nil
}

func joinTypes() string {
	names := make([]string, len(ParamTypes))
	for i, t := range ParamTypes {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// normalizeValue checks one value against p's type; msg is empty when it is acceptable.
// The mask is accepted as it is for secrets: it means "keep the stored one".
func (p Param) normalizeValue(v any) (_ any, msg string) {
	if v == nil {
		return nil, ""
	}
	if p.Secret() && v == secrets.Mask {
		return v, ""
	}
	switch p.Type {
	case ParamNumber:
		return normalizeNumber(v)
	case ParamBoolean:
		return normalizeBool(v)
	case ParamMultiSelect:
		return p.normalizeMulti(v)
	case ParamJSON:
		return v, ""
	}
	s, ok := scalarString(v)
	if !ok {
		return nil, "must be a string"
	}
	if s == "" {
		return s, ""
	}
	if msg := p.checkLength(s); msg != "" {
		return nil, msg
	}
	switch p.Type {
	case ParamEmail:
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return nil, "must be an email address"
		}
	case ParamURL:
		if u, err := url.Parse(s); err != nil || u.Scheme == "" || u.Host == "" {
			return nil, "must be an absolute URL"
		}
	case ParamSelect:
		if len(p.Options) > 0 && !p.hasOption(s) {
			return nil, "must be one of the option keys"
		}
	}
	return s, ""
}

func (p Param) checkLength(s string) string {
	n := utf8.RuneCountInString(s)
	if p.MinValueLength != nil && n < *p.MinValueLength {
		return fmt.Sprintf("must be at least %d characters", *p.MinValueLength)
	}
	if p.MaxValueLength != nil && n > *p.MaxValueLength {
		return fmt.Sprintf("must be at most %d characters", *p.MaxValueLength)
	}
	return ""
}

func (p Param) hasOption(key string) bool {
	return slices.ContainsFunc(p.Options, func(o Option) bool { return o.Key == key })
}

func (p Param) normalizeMulti(v any) (any, string) {
	var items []string
	switch t := v.(type) {
	case []any:
		for _, item := range t {
			s, ok := scalarString(item)
			if !ok {
				return nil, "must be a list of strings"
			}
			items = append(items, s)
		}
	case []string:
		items = t
	case string:
		// Older clients send a multiselect as one comma-separated string.
		for _, item := range strings.Split(t, ",") {
			if item = strings.TrimSpace(item); item != "" {
				items = append(items, item)
			}
		}
	default:
		return nil, "must be a list of strings"
	}
	out := make([]any, len(items))
	for i, s := range items {
		if len(p.Options) > 0 && !p.hasOption(s) {
			return nil, fmt.Sprintf("'%s' is not one of the option keys", s)
		}
		out[i] = s
	}
	return out, ""
}

func normalizeNumber(v any) (any, string) {
	switch t := v.(type) {
	case json.Number:
		return t, ""
	case float64:
		return json.Number(strconv.FormatFloat(t, 'f', -1, 64)), ""
	case int:
		return json.Number(strconv.Itoa(t)), ""
	case int64:
		return json.Number(strconv.FormatInt(t, 10)), ""
	case string:
		if strings.TrimSpace(t) == "" {
			return nil, ""
		}
		if _, err := strconv.ParseFloat(strings.TrimSpace(t), 64); err == nil {
			return json.Number(strings.TrimSpace(t)), ""
		}
	}
	return nil, "must be a number"
}

func normalizeBool(v any) (any, string) {
	switch t := v.(type) {
	case bool:
		return t, ""
	case string:
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "true":
			return true, ""
		case "false":
			return false, ""
		case "":
			return nil, ""
		}
	}
	return nil, "must be true or false"
}

// scalarString renders a JSON scalar as a string: clients written for v4, whose values were
// strings, send numbers and booleans for text fields too.
func scalarString(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case json.Number:
		return t.String(), true
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(t), true
	}
	return "", false
}

// KeepSecrets carries the stored secrets of a password parameter into p, which replaces
// stored: a value or default p omits (nil) or sends masked keeps the stored one. Nothing is
// carried from a parameter that was not a password, and a mask sent for a parameter that is
// not (or no longer) a password means no value, never the literal mask.
func (p *Param) KeepSecrets(stored *Param) {
	keep := func(incoming, old any) any {
		if incoming != nil && incoming != secrets.Mask {
			return incoming
		}
		if p.Secret() && stored != nil && stored.Secret() {
			return old
		}
		return nil
	}
	var oldValue, oldDefault any
	if stored != nil {
		oldValue, oldDefault = stored.Value, stored.Default
	}
	p.Value = keep(p.Value, oldValue)
	p.Default = keep(p.Default, oldDefault)
}

// Masked returns p as callers may see it: a password's value and default, when set,
// replaced by the mask.
func (p Param) Masked() Param {
	if !p.Secret() {
		return p
	}
	if p.Value != nil && p.Value != "" {
		p.Value = secrets.Mask
	}
	if p.Default != nil && p.Default != "" {
		p.Default = secrets.Mask
	}
	return p
}

// Effective is what a reference to the parameter resolves to: its value, else its
// default, as text (strings as they are, other JSON values in their JSON form, nothing
// as ""). For a password it is only meaningful once the caller has opened the secret.
func (p Param) Effective() string { return Render(p.EffectiveValue()) }

// EffectiveValue is what a reference to the parameter resolves to, as a decoded JSON
// value: its value, else (no value, or "") its default, else the value as it is (nil or
// ""). For a password it is only meaningful once the caller has opened the secret.
func (p Param) EffectiveValue() any {
	if (p.Value == nil || p.Value == "") && p.Default != nil {
		return p.Default
	}
	return p.Value
}

// Render turns a decoded JSON value into the text a `$(…)` reference is replaced with.
func Render(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case json.Number:
		return t.String()
	case bool:
		return strconv.FormatBool(t)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(raw)
}
