// Package domain holds identity's types and rules: plain Go, no transport or storage.
package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/jsonbody"
	"github.com/baton-flow/baton/libs/names"
	"github.com/baton-flow/baton/libs/secrets"
)

// TeamStatus is whether a team is in use.
type TeamStatus string

// Team statuses.
const (
	TeamActive   TeamStatus = "active"
	TeamInactive TeamStatus = "inactive"
)

// Valid reports whether s is a known status.
func (s TeamStatus) Valid() bool { return s == TeamActive || s == TeamInactive }

// Team is a group of people owning workflows.
type Team struct {
	// ID is the record's id; a team deleted and created again under the same name gets a
	// new one, so other services can tell the two apart.
	ID           string
	Name         string
	DisplayName  string
	Status       TeamStatus
	Labels       map[string]string
	ExternalRef  string
	CreationDate time.Time
	// Members are the team's people, by user id, each with one role.
	Members []Member
	// ApproverGroups name sets of members who may decide approvals.
	ApproverGroups []ApproverGroup
	// Parameters are the team's parameters; secret values are kept sealed as stored.
	Parameters []TeamParam
	// QuotaOverrides are the quota limits set for this team; the rest come from defaults.
	QuotaOverrides TeamQuotaOverrides
	// Version increases with every change; updates are conditional on it.
	Version int64
}

// Clone returns a deep copy of t, so a change can be compared with what it started from.
func (t Team) Clone() Team {
	c := t
	c.Labels = maps.Clone(t.Labels)
	c.Members = slices.Clone(t.Members)
	c.ApproverGroups = make([]ApproverGroup, len(t.ApproverGroups))
	for i, g := range t.ApproverGroups {
		g.Approvers = slices.Clone(g.Approvers)
		c.ApproverGroups[i] = g
	}
	c.Parameters = make([]TeamParam, len(t.Parameters))
	for i, p := range t.Parameters {
		c.Parameters[i] = p.clone()
	}
	c.QuotaOverrides = t.QuotaOverrides.clone()
	return c
}

// TeamChanges is a partial update; nil fields are left alone.
type TeamChanges struct {
	DisplayName *string
	Status      *TeamStatus
	// Labels are merged: a nil value removes the key.
	Labels      map[string]*string
	ExternalRef *string
	// Members are upserted by user id.
	Members []MemberChange
	// ApproverGroups are upserted by name, after Members.
	ApproverGroups []ApproverGroupChange
	// Parameters are upserted by name.
	Parameters []TeamParam
	// Quotas' non-nil fields override the team's limits.
	Quotas *TeamQuotaOverrides
}

// MaxNameLength bounds slugs.
const MaxNameLength = names.MaxLength

// Slug turns free text into a name ("My Flow" → "my-flow"); see names.Slug.
func Slug(s string) string { return names.Slug(s) }

// TeamName validates a requested name and returns its slug.
func TeamName(requested string) (string, error) {
	name := Slug(requested)
	if name == "" {
		return "", apperr.Invalid(apperr.TeamInvalidReq, "A team name is required: it must contain letters or digits.",
			apperr.FieldError{Field: "name", Message: "must contain letters or digits"})
	}
	if names.Reserved(name) {
		return "", apperr.New(apperr.TeamReservedName, "The team name '%s' is reserved.", name)
	}
	return name, nil
}

// NewTeam makes a team from a create request, applying defaults.
func NewTeam(id, requestedName string, ch TeamChanges, now time.Time) (Team, error) {
	name, err := TeamName(requestedName)
	if err != nil {
		return Team{}, err
	}
	t := Team{ID: id, Name: name, DisplayName: requestedName, Status: TeamActive, CreationDate: now}
	if err := t.Apply(ch); err != nil {
		return Team{}, err
	}
	if strings.TrimSpace(t.DisplayName) == "" {
		t.DisplayName = name
	}
	return t, nil
}

// Apply applies changes to t, validating them.
func (t *Team) Apply(ch TeamChanges) error {
	if ch.Status != nil {
		if !ch.Status.Valid() {
			return apperr.Invalid(apperr.TeamInvalidReq, "The team status must be active or inactive.",
				apperr.FieldError{Field: "status", Message: "must be active or inactive"})
		}
		t.Status = *ch.Status
	}
	if ch.DisplayName != nil && strings.TrimSpace(*ch.DisplayName) != "" {
		t.DisplayName = strings.TrimSpace(*ch.DisplayName)
	}
	if ch.ExternalRef != nil {
		t.ExternalRef = *ch.ExternalRef
	}
	for k, v := range ch.Labels {
		if strings.TrimSpace(k) == "" {
			return apperr.Invalid(apperr.TeamInvalidReq, "Label keys must not be empty.",
				apperr.FieldError{Field: "labels", Message: "empty key"})
		}
		if err := names.CheckLabelKey(k); err != nil {
			return apperr.Invalid(apperr.TeamInvalidReq, "A label key is not allowed.",
				apperr.FieldError{Field: "labels", Message: err.Error()})
		}
		if v == nil {
			delete(t.Labels, k)
			continue
		}
		if t.Labels == nil {
			t.Labels = map[string]string{}
		}
		t.Labels[k] = *v
	}
	if err := t.UpsertMembers(ch.Members); err != nil {
		return err
	}
	if err := t.UpsertApproverGroups(ch.ApproverGroups); err != nil {
		return err
	}
	if err := t.UpsertParams(ch.Parameters); err != nil {
		return err
	}
	if ch.Quotas != nil {
		if err := t.QuotaOverrides.apply(*ch.Quotas); err != nil {
			return err
		}
	}
	return nil
}

// TeamFilter selects teams in a search; empty fields do not filter.
type TeamFilter struct {
	Names    []string
	Statuses []TeamStatus
	Labels   map[string]string
	// MemberID keeps only the teams this user belongs to.
	MemberID string
}

// TeamSortFields are the fields a team search may sort by.
var TeamSortFields = []string{"name", "creationDate", "status"}

// TeamSecretMask replaces secret parameter values in every answer. A write that sends it
// back (or omits the value) keeps the stored value.
const TeamSecretMask = secrets.Mask

// TeamParamPassword is the parameter type whose values are secret.
const TeamParamPassword = "password"

// TeamParam is one team parameter (the contract's AbstractParam), stored as given. Default
// and Value hold any JSON value (text, number, list, object).
type TeamParam struct {
	Name           string
	Label          string
	Description    string
	Type           string
	Default        json.RawMessage
	Value          json.RawMessage
	Required       bool
	Placeholder    string
	HelperText     string
	Options        []TeamParamOption
	MinValueLength *int
	MaxValueLength *int
	ReadOnly       bool
	HiddenValue    bool
}

// TeamParamOption is one choice of a select or multiselect parameter.
type TeamParamOption struct {
	Key   string
	Value string
}

// Secret reports whether the parameter's values must never be shown.
func (p TeamParam) Secret() bool { return p.Type == TeamParamPassword }

// Masked returns p as callers may see it: secret values replaced by TeamSecretMask.
func (p TeamParam) Masked() TeamParam {
	if !p.Secret() {
		return p
	}
	mask, _ := json.Marshal(TeamSecretMask)
	if !IsAbsentValue(p.Value) {
		p.Value = mask
	}
	if !IsAbsentValue(p.Default) {
		p.Default = mask
	}
	return p
}

func (p TeamParam) clone() TeamParam {
	p.Default = bytes.Clone(p.Default)
	p.Value = bytes.Clone(p.Value)
	p.Options = slices.Clone(p.Options)
	return p
}

// EffectiveValue is what a reference to the parameter resolves to, decoded (numbers as
// json.Number): its value, else (no value, or "") its default, else the value as it is
// (nil or ""). For a password it is only meaningful once the caller has opened the secret.
func (p TeamParam) EffectiveValue() (any, error) {
	raw := p.Value
	if (IsAbsentValue(raw) || isEmptyString(raw)) && !IsAbsentValue(p.Default) {
		raw = p.Default
	}
	if IsAbsentValue(raw) {
		return nil, nil
	}
	var v any
	// The value itself stays out of the error: it may be a secret.
	if err := jsonbody.DecodeNumbers(raw, &v); err != nil {
		return nil, fmt.Errorf("team parameter %s: the stored value is not valid JSON", p.Name)
	}
	return v, nil
}

func isEmptyString(v json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(v), []byte(`""`))
}

// IsAbsentValue reports whether a parameter value is missing or JSON null.
func IsAbsentValue(v json.RawMessage) bool {
	trimmed := bytes.TrimSpace(v)
	return len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null"))
}

// IsMaskedValue reports whether v is absent or the mask: a secret value the caller did not
// change.
func IsMaskedValue(v json.RawMessage) bool {
	if IsAbsentValue(v) {
		return true
	}
	var s string
	return json.Unmarshal(v, &s) == nil && s == TeamSecretMask
}

// Param returns the parameter called name.
func (t Team) Param(name string) (TeamParam, bool) {
	for _, p := range t.Parameters {
		if p.Name == name {
			return p, true
		}
	}
	return TeamParam{}, false
}

// UpsertParams adds or replaces parameters by name. A secret value that is absent or the
// mask keeps the stored one, so clients can send back what they read.
func (t *Team) UpsertParams(params []TeamParam) error {
	for i, p := range params {
		p.Name = strings.TrimSpace(p.Name)
		if p.Name == "" {
			return apperr.Invalid(apperr.TeamInvalidReq, "Every team parameter needs a name.",
				apperr.FieldError{Field: fmt.Sprintf("parameters[%d].name", i), Message: "required"})
		}
		if p.MinValueLength != nil && p.MaxValueLength != nil && *p.MinValueLength > *p.MaxValueLength {
			return apperr.Invalid(apperr.TeamInvalidReq,
				fmt.Sprintf("Parameter '%s': minValueLength exceeds maxValueLength.", p.Name),
				apperr.FieldError{Field: fmt.Sprintf("parameters[%d].minValueLength", i), Message: "exceeds maxValueLength"})
		}
		p = p.clone()
		idx := slices.IndexFunc(t.Parameters, func(q TeamParam) bool { return q.Name == p.Name })
		if p.Secret() {
			var old TeamParam // a new parameter has nothing to keep: the mask is not a value
			if idx >= 0 {
				old = t.Parameters[idx]
			}
			if IsMaskedValue(p.Value) {
				p.Value = old.Value
			}
			if IsMaskedValue(p.Default) {
				p.Default = old.Default
			}
		}
		if idx >= 0 {
			t.Parameters[idx] = p
		} else {
			t.Parameters = append(t.Parameters, p)
		}
	}
	return nil
}

// RemoveParam deletes the parameter called name.
func (t *Team) RemoveParam(name string) error {
	idx := slices.IndexFunc(t.Parameters, func(p TeamParam) bool { return p.Name == name })
	if idx < 0 {
		return apperr.New(apperr.ParamsNotFound, "Team '%s' has no parameter '%s'.", t.Name, name)
	}
	t.Parameters = slices.Delete(t.Parameters, idx, idx+1)
	return nil
}
