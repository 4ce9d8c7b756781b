package domain

import (
	"net/mail"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/names"
)

// UserType is what a user may do instance-wide.
type UserType string

// User types: admins and operators hold the global roles of the same name.
const (
	UserTypeUser     UserType = "user"
	UserTypeAdmin    UserType = "admin"
	UserTypeOperator UserType = "operator"
)

// Valid reports whether t is a known type.
func (t UserType) Valid() bool {
	return t == UserTypeUser || t == UserTypeAdmin || t == UserTypeOperator
}

// UserStatus is where a user is in their life.
type UserStatus string

// User statuses. Pending users were invited (added to a team by email) and have not signed
// in yet; deleted users keep their record so references to them still resolve.
const (
	UserActive   UserStatus = "active"
	UserInactive UserStatus = "inactive"
	UserPending  UserStatus = "pending"
	UserDeleted  UserStatus = "deleted"
)

// Valid reports whether s is a known status.
func (s UserStatus) Valid() bool {
	return s == UserActive || s == UserInactive || s == UserPending || s == UserDeleted
}

// User is a person who signs in to Baton.
type User struct {
	ID            string
	Email         string
	Name          string
	DisplayName   string
	Type          UserType
	Status        UserStatus
	Labels        map[string]string
	CreationDate  time.Time
	LastLoginDate *time.Time
	// Version increases with every change; updates are conditional on it.
	Version int64
}

// CanSignIn reports whether credentials of u may be used: active users, and invited ones
// whose first sign-in activates them.
func (u User) CanSignIn() bool { return u.Status == UserActive || u.Status == UserPending }

// Roles are the global roles u's type grants.
func (u User) Roles() []string {
	switch u.Type {
	case UserTypeAdmin:
		return []string{string(UserTypeAdmin)}
	case UserTypeOperator:
		return []string{string(UserTypeOperator)}
	}
	return nil
}

// UserChanges is a partial update of a user; nil fields are left alone.
type UserChanges struct {
	Name        *string
	DisplayName *string
	Email       *string
	// Labels are merged: a nil value removes the key.
	Labels map[string]*string
	Type   *UserType
	Status *UserStatus
}

// Sentinels for errors.Is.
var (
	ErrUserNotFound = apperr.New(apperr.UserNotFound, "User was not found.")
	// ErrUserEmailTaken matches the error for an email another user holds.
	ErrUserEmailTaken = apperr.New(apperr.UserEmailTaken, "The email belongs to another user.")
)

// UserNotFound is the error for a user that does not exist.
func UserNotFound(ref string) error {
	return apperr.New(apperr.UserNotFound, "User '%s' was not found.", ref)
}

// UserEmailTaken is the error for an email another user holds.
func UserEmailTaken(email string) error {
	e := apperr.New(apperr.UserEmailTaken, "The email '%s' belongs to another user.", email)
	e.Fields = []apperr.FieldError{{Field: "email", Message: "belongs to another user"}}
	return e
}

// NormalizeEmail validates an email address and returns it trimmed and lower-cased, the
// form users are stored and found by.
func NormalizeEmail(email string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(email))
	addr, err := mail.ParseAddress(e)
	if err != nil || addr.Address != e {
		return "", apperr.Invalid(apperr.RequestInvalid, "'"+email+"' is not an email address.",
			apperr.FieldError{Field: "email", Message: "not an email address"})
	}
	return e, nil
}

// NewUser makes a user of type user with the given status; name defaults to the part of
// the email before the @.
func NewUser(id, email, name string, status UserStatus, now time.Time) (User, error) {
	e, err := NormalizeEmail(email)
	if err != nil {
		return User{}, err
	}
	name = strings.TrimSpace(name)
	if name == "" {
		name, _, _ = strings.Cut(e, "@")
	}
	return User{ID: id, Email: e, Name: name, Type: UserTypeUser, Status: status, CreationDate: now}, nil
}

// Apply applies changes to u, validating them. Who may change which field is the caller's
// concern.
func (u *User) Apply(ch UserChanges) error {
	if ch.Type != nil {
		if !ch.Type.Valid() {
			return apperr.Invalid(apperr.RequestInvalid, "The user type must be user, admin or operator.",
				apperr.FieldError{Field: "type", Message: "must be user, admin or operator"})
		}
		u.Type = *ch.Type
	}
	if ch.Status != nil && *ch.Status != u.Status {
		// Deleting has to go through DELETE, which also removes memberships; pending is
		// reached only by invitation.
		if *ch.Status != UserActive && *ch.Status != UserInactive {
			return apperr.Invalid(apperr.RequestInvalid, "A user's status can be set to active or inactive.",
				apperr.FieldError{Field: "status", Message: "must be active or inactive"})
		}
		u.Status = *ch.Status
	}
	if ch.Email != nil {
		e, err := NormalizeEmail(*ch.Email)
		if err != nil {
			return err
		}
		u.Email = e
	}
	if ch.Name != nil && strings.TrimSpace(*ch.Name) != "" {
		u.Name = strings.TrimSpace(*ch.Name)
	}
	if ch.DisplayName != nil {
		u.DisplayName = strings.TrimSpace(*ch.DisplayName)
	}
	for k, v := range ch.Labels {
		if strings.TrimSpace(k) == "" {
			return apperr.Invalid(apperr.RequestInvalid, "Label keys must not be empty.",
				apperr.FieldError{Field: "labels", Message: "empty key"})
		}
		if err := names.CheckLabelKey(k); err != nil {
			return apperr.Invalid(apperr.RequestInvalid, "A label key is not allowed.",
				apperr.FieldError{Field: "labels", Message: err.Error()})
		}
		if v == nil {
			delete(u.Labels, k)
			continue
		}
		if u.Labels == nil {
			u.Labels = map[string]string{}
		}
		u.Labels[k] = *v
	}
	return nil
}

// UserFilter selects users in a search; empty fields do not filter.
type UserFilter struct {
	IDs      []string
	Statuses []UserStatus
	Labels   map[string]string
}

// UserSortFields are the fields a user search may sort by.
var UserSortFields = []string{"name", "creationDate", "status"}
