// Package domain holds identity's types and rules: plain Go, no transport or storage.
package domain

import (
	"strings"
	"time"
	"unicode"

	"github.com/baton-flow/baton/libs/apperr"
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
	// Version increases with every change; updates are conditional on it.
	Version int64
}

// TeamChanges is a partial update; nil fields are left alone.
type TeamChanges struct {
	DisplayName *string
	Status      *TeamStatus
	// Labels are merged: a nil value removes the key.
	Labels      map[string]*string
	ExternalRef *string
}

// MaxNameLength bounds slugs.
const MaxNameLength = 64

// reserved names collide with fixed paths or mean something to the UI.
var reserved = map[string]bool{
	"query": true, "roles": true, "quotas": true, "validate-name": true, "home": true,
	"admin": true, "system": true, "profile": true, "connect": true,
}

// Slug turns free text into a name: lower case, spaces and `_` become `-`, other
// characters are dropped, at most MaxNameLength characters ("My Flow" → "my-flow").
func Slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		switch {
		case r == ' ' || r == '_' || r == '-':
			b.WriteByte('-')
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
		}
	}
	out := b.String()
	if len(out) > MaxNameLength {
		out = out[:MaxNameLength]
	}
	return out
}

// TeamName validates a requested name and returns its slug.
func TeamName(requested string) (string, error) {
	name := Slug(requested)
	if name == "" {
		return "", apperr.Invalid(apperr.TeamInvalidReq, "A team name is required: it must contain letters or digits.",
			apperr.FieldError{Field: "name", Message: "must contain letters or digits"})
	}
	if reserved[name] {
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
		if v == nil {
			delete(t.Labels, k)
			continue
		}
		if t.Labels == nil {
			t.Labels = map[string]string{}
		}
		t.Labels[k] = *v
	}
	return nil
}

// TeamFilter selects teams in a search; empty fields do not filter.
type TeamFilter struct {
	Names    []string
	Statuses []TeamStatus
	Labels   map[string]string
}

// TeamSortFields are the fields a team search may sort by.
var TeamSortFields = []string{"name", "creationDate", "status"}
