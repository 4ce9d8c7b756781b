// Package taskjson is the JSON form of a task: the API's body (API.md §3, Task) and, with
// its read-only fields, the form the store keeps. Fields Baton does not know are kept at
// every level that has them (task, spec, params, results) and written back after the
// known ones.
package taskjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/param"
	"github.com/baton-flow/baton/libs/tasksapi"
	"github.com/baton-flow/baton/services/tasks/internal/domain"
)

// TimeFormat is RFC 3339 in UTC with milliseconds, the contract's format for times.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// The JSON form of a task and its parts is declared once, by the tasks service's contract
// (libs/tasksapi), whose resolve answer is this very body: unknown members are kept at
// every level that has them and written back after the known ones, compacted and without
// nulls.
type (
	// Task is a task as JSON carries it.
	Task = tasksapi.Task
	// Changelog is one version's changelog; on input only Reason is read.
	Changelog = tasksapi.Changelog
	// Spec is the task's step.
	Spec = tasksapi.Spec
	// Env is an environment variable.
	Env = tasksapi.Env
	// Result is one output.
	Result = tasksapi.Result
	// Workspace is a Tekton workspace declaration.
	Workspace = tasksapi.Workspace
)

// Param is the contract's AbstractParam, with v4's names (`key`, `defaultValue`) read and
// written beside Baton's and unknown members kept (libs/param).
type Param = param.Param

// ParamOption is one choice of a select parameter.
type ParamOption = param.Option

// Decode reads a task from an API body. Read-only fields (version, scope, team,
// creationDate, the changelog's author and date) are ignored; the changelog's reason is
// kept. Malformed JSON answers REQUEST_INVALID; a field of the wrong type TASK_INVALID.
func Decode(body []byte) (domain.Task, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return domain.Task{}, apperr.New(apperr.RequestInvalid, "A task body is required.")
	}
	var w Task
	if err := json.Unmarshal(body, &w); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return domain.Task{}, domain.Invalid([]apperr.FieldError{{
				Field: te.Field, Message: fmt.Sprintf("must be %s, not %s", jsonKind(te.Type), te.Value),
			}})
		}
		return domain.Task{}, apperr.Wrap(apperr.RequestInvalid, err, "The request body is not valid JSON: %s", err.Error())
	}
	t, err := toDomain(w)
	if err != nil {
		return domain.Task{}, err
	}
	reason := t.Changelog.Reason
	t.Version, t.Scope, t.Team, t.CreationDate = 0, "", "", time.Time{}
	t.Changelog = domain.Changelog{Reason: reason}
	return t, nil
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// DecodeStored reads a task written by Encode, read-only fields included.
func DecodeStored(body []byte) (domain.Task, error) {
	var w Task
	if err := json.Unmarshal(body, &w); err != nil {
		return domain.Task{}, fmt.Errorf("decode stored task: %w", err)
	}
	return toDomain(w)
}

// Encode writes t in the API's JSON form.
func Encode(t domain.Task) ([]byte, error) { return json.Marshal(FromDomain(t)) }

// FromDomain returns the JSON form of t.
func FromDomain(t domain.Task) Task {
	w := Task{
		Name: t.Name, DisplayName: t.DisplayName, Description: t.Description, Type: t.Type,
		Version: t.Version, Status: string(t.Status), Scope: string(t.Scope), Team: t.Team,
		Category: t.Category, Icon: t.Icon, Verified: t.Verified, Labels: t.Labels,
		Annotations: t.Annotations, Extra: t.Extra,
	}
	if !t.CreationDate.IsZero() {
		w.CreationDate = t.CreationDate.UTC().Format(TimeFormat)
	}
	if c := t.Changelog; c != (domain.Changelog{}) {
		w.Changelog = &Changelog{Author: c.Author, Reason: c.Reason}
		if !c.Date.IsZero() {
			w.Changelog.Date = c.Date.UTC().Format(TimeFormat)
		}
	}
	s := t.Spec
	w.Spec = Spec{
		Image: s.Image, Command: s.Command, Arguments: s.Arguments, Script: s.Script,
		WorkingDir: s.WorkingDir, StepName: s.StepName, Extra: s.Extra,
	}
	for _, e := range s.Envs {
		w.Spec.Envs = append(w.Spec.Envs, Env(e))
	}
	for _, p := range s.Params {
		w.Spec.Params = append(w.Spec.Params, ParamFromDomain(p))
	}
	for _, r := range s.Results {
		w.Spec.Results = append(w.Spec.Results, Result{Name: r.Name, Description: r.Description, Type: r.Type, Extra: r.Extra})
	}
	for _, ws := range s.Workspaces {
		w.Spec.Workspaces = append(w.Spec.Workspaces, Workspace(ws))
	}
	return w
}

// ParamFromDomain returns the JSON form of p.
func ParamFromDomain(p domain.Param) Param {
	out := Param{
		Name: p.Name, Label: p.Label, Description: p.Description, Type: p.Type,
		Default: p.Default, Value: p.Value, Required: p.Required, Placeholder: p.Placeholder,
		HelperText: p.HelperText, MinValueLength: p.MinValueLength, MaxValueLength: p.MaxValueLength,
		ReadOnly: p.ReadOnly, HiddenValue: p.HiddenValue, Extra: p.Extra,
	}
	for _, o := range p.Options {
		out.Options = append(out.Options, ParamOption(o))
	}
	return out
}

// ParamDomain returns p as the domain has it.
func ParamDomain(p Param) domain.Param {
	out := domain.Param{
		Name: p.Name, Label: p.Label, Description: p.Description, Type: p.Type,
		Default: present(p.Default), Value: present(p.Value), Required: p.Required,
		Placeholder: p.Placeholder, HelperText: p.HelperText, MinValueLength: p.MinValueLength,
		MaxValueLength: p.MaxValueLength, ReadOnly: p.ReadOnly, HiddenValue: p.HiddenValue, Extra: p.Extra,
	}
	for _, o := range p.Options {
		out.Options = append(out.Options, domain.ParamOption(o))
	}
	return out
}

// ResultDomain returns r as the domain has it.
func ResultDomain(r Result) domain.Result {
	return domain.Result{Name: r.Name, Description: r.Description, Type: r.Type, Extra: r.Extra}
}

// present drops JSON null and compacts the rest, so values compare and echo the same
// whatever spacing they came with.
func present(v json.RawMessage) json.RawMessage {
	if domain.IsAbsent(v) {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return v
	}
	return b.Bytes()
}

// toDomain returns w as the domain has it.
func toDomain(w Task) (domain.Task, error) {
	t := domain.Task{
		Name: w.Name, DisplayName: w.DisplayName, Description: w.Description, Type: w.Type,
		Version: w.Version, Status: domain.Status(w.Status), Scope: domain.Scope(w.Scope), Team: w.Team,
		Category: w.Category, Icon: w.Icon, Verified: w.Verified, Labels: w.Labels, Extra: w.Extra,
	}
	if len(t.Labels) == 0 {
		t.Labels = nil
	}
	for k, v := range w.Annotations {
		if domain.IsAbsent(v) {
			continue
		}
		if t.Annotations == nil {
			t.Annotations = map[string]json.RawMessage{}
		}
		t.Annotations[k] = present(v)
	}
	if w.CreationDate != "" {
		d, err := time.Parse(time.RFC3339Nano, w.CreationDate)
		if err != nil {
			return domain.Task{}, domain.Invalid([]apperr.FieldError{{Field: "creationDate", Message: "not an RFC 3339 time"}})
		}
		t.CreationDate = d.UTC()
	}
	if c := w.Changelog; c != nil {
		t.Changelog = domain.Changelog{Author: c.Author, Reason: c.Reason}
		if c.Date != "" {
			d, err := time.Parse(time.RFC3339Nano, c.Date)
			if err != nil {
				return domain.Task{}, domain.Invalid([]apperr.FieldError{{Field: "changelog.date", Message: "not an RFC 3339 time"}})
			}
			t.Changelog.Date = d.UTC()
		}
	}
	s := w.Spec
	t.Spec = domain.Spec{
		Image: s.Image, Command: s.Command, Arguments: s.Arguments, Script: s.Script,
		WorkingDir: s.WorkingDir, StepName: s.StepName, Extra: s.Extra,
	}
	for _, e := range s.Envs {
		t.Spec.Envs = append(t.Spec.Envs, domain.Env(e))
	}
	for _, p := range s.Params {
		t.Spec.Params = append(t.Spec.Params, ParamDomain(p))
	}
	for _, r := range s.Results {
		t.Spec.Results = append(t.Spec.Results, ResultDomain(r))
	}
	for _, ws := range s.Workspaces {
		t.Spec.Workspaces = append(t.Spec.Workspaces, domain.Workspace(ws))
	}
	return t, nil
}

// Changelogs returns a task's history in the API's form, newest first.
func Changelogs(history []domain.VersionChange) []Changelog {
	out := make([]Changelog, 0, len(history))
	for i := len(history) - 1; i >= 0; i-- {
		h := history[i]
		c := Changelog{Version: h.Version, Author: h.Author, Reason: h.Reason}
		if !h.Date.IsZero() {
			c.Date = h.Date.UTC().Format(TimeFormat)
		}
		out = append(out, c)
	}
	return out
}
