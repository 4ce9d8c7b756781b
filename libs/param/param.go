// Package param is the contract's AbstractParam (API.md §3) as JSON, declared once for every
// service that reads or writes parameter definitions: global and team parameters
// (identity), workflow parameters (workflows, and runs, which read them from a workflow's
// version) and task parameters (tasks).
//
// Clients written for Boomerang v4 name a parameter `key` and its default `defaultValue`,
// and print `label`. Both spellings are read, and both are written back, so such a client
// and one written for Baton read the same document (API.md §1, "v4 field aliases"); a label
// left out reads as the name.
package param

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/baton-flow/baton/libs/jsonextra"
)

// Param is one parameter definition. Default and Value hold any JSON value, as sent.
type Param struct {
	Name           string
	Label          string
	Description    string
	Type           string
	Default        json.RawMessage
	Value          json.RawMessage
	Required       bool
	Placeholder    string
	HelperText     string
	Options        []Option
	MinValueLength *int
	MaxValueLength *int
	ReadOnly       bool
	HiddenValue    bool
	// Extra holds the members Baton does not know, compacted, written back after the
	// known ones: designers keep their own settings on parameters.
	Extra map[string]json.RawMessage
}

// Option is one choice of a select or multiselect parameter.
type Option struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// ErrConflict is returned (wrapped) when a body gives a field under both of its names with
// different values: which one the client meant cannot be known.
var ErrConflict = errors.New("a parameter field was given twice with different values")

// wire is the JSON form, v4's names included. encoding/json matches member names
// regardless of case, so `helperText` fills HelperText too.
type wire struct {
	Name           string          `json:"name"`
	Key            string          `json:"key,omitempty"`
	Label          string          `json:"label,omitempty"`
	Description    string          `json:"description,omitempty"`
	Type           string          `json:"type,omitempty"`
	Default        json.RawMessage `json:"default,omitempty"`
	DefaultValue   json.RawMessage `json:"defaultValue,omitempty"`
	Value          json.RawMessage `json:"value,omitempty"`
	Required       bool            `json:"required"`
	Placeholder    string          `json:"placeholder,omitempty"`
	HelperText     string          `json:"helpertext,omitempty"`
	Options        []Option        `json:"options,omitempty"`
	MinValueLength *int            `json:"minValueLength,omitempty"`
	MaxValueLength *int            `json:"maxValueLength,omitempty"`
	ReadOnly       bool            `json:"readOnly"`
	HiddenValue    bool            `json:"hiddenValue"`
}

// known are the lower-cased member names wire reads; any other member is Extra.
var known = jsonextra.Keys(wire{})

// MarshalJSON writes Baton's names and v4's beside them: `key` = `name`, `defaultValue` =
// `default`, and `label` = the name when no label was given. Then the kept unknown members.
func (p Param) MarshalJSON() ([]byte, error) {
	w := wire{
		Name: p.Name, Key: p.Name, Label: p.Label, Description: p.Description, Type: p.Type,
		Default: present(p.Default), Value: present(p.Value), Required: p.Required,
		Placeholder: p.Placeholder, HelperText: p.HelperText, Options: p.Options,
		MinValueLength: p.MinValueLength, MaxValueLength: p.MaxValueLength,
		ReadOnly: p.ReadOnly, HiddenValue: p.HiddenValue,
	}
	w.DefaultValue = w.Default
	if w.Label == "" {
		w.Label = p.Name
	}
	return jsonextra.Marshal(w, p.Extra)
}

// UnmarshalJSON reads either spelling of each field. A field given under both names with
// different values is refused (ErrConflict); null values count as absent.
func (p *Param) UnmarshalJSON(b []byte) error {
	var w wire
	unknown, err := jsonextra.Unmarshal(b, &w, known)
	if err != nil {
		return err
	}
	name, err := either("name", w.Name, "key", w.Key)
	if err != nil {
		return err
	}
	def, err := eitherValue(w.Default, w.DefaultValue)
	if err != nil {
		return err
	}
	// Compacted, so what is stored and echoed does not depend on the sender's spacing.
	extra, err := jsonextra.Compact(unknown)
	if err != nil {
		return err
	}
	*p = Param{
		Name: name, Label: w.Label, Description: w.Description, Type: w.Type,
		Default: def, Value: present(w.Value), Required: w.Required, Placeholder: w.Placeholder,
		HelperText: w.HelperText, Options: w.Options, MinValueLength: w.MinValueLength,
		MaxValueLength: w.MaxValueLength, ReadOnly: w.ReadOnly, HiddenValue: w.HiddenValue,
		Extra: extra,
	}
	return nil
}

func either(aName, a, bName, b string) (string, error) {
	switch {
	case a == "":
		return b, nil
	case b == "" || a == b:
		return a, nil
	}
	return "", fmt.Errorf("%w: %s %q and %s %q", ErrConflict, aName, a, bName, b)
}

func eitherValue(def, defaultValue json.RawMessage) (json.RawMessage, error) {
	def, defaultValue = present(def), present(defaultValue)
	switch {
	case def == nil:
		return defaultValue, nil
	case defaultValue == nil || sameJSON(def, defaultValue):
		return def, nil
	}
	return nil, fmt.Errorf("%w: default %s and defaultValue %s", ErrConflict, def, defaultValue)
}

func sameJSON(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// present drops a JSON null, so that null values are omitted like absent ones.
func present(v json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(v)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil
	}
	return v
}
