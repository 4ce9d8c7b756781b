package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/baton-flow/baton/libs/param"
)

// Vote is one person's decision on an action: an approval's vote, or a manual action's
// completion with the values of its form.
type Vote struct {
	By       Actioner
	Approved bool
	Comments string
	Values   map[string]any
}

// Refusals of a vote that the action's state decides.
var (
	// ErrActionClosed refuses a decision on an action decided or cancelled already.
	ErrActionClosed = errors.New("the action is closed")
	// ErrVotedAlready refuses a second decision by the same person.
	ErrVotedAlready = errors.New("this person has decided on the action already")
	// ErrActionBusy refuses a decision on an action another request holds.
	ErrActionBusy = errors.New("another request is deciding the action")
	// ErrSameVote answers a decision the person has made on the action already, as it
	// stands: a request sent again (its answer lost) is not a second vote, and asks for
	// nothing the action does not show. Callers answer it as the success it repeats.
	ErrSameVote = errors.New("this person's decision on the action is this one already")
)

// MaxCommentBytes bounds a vote's comments.
const MaxCommentBytes = 4 << 10

// Check reports why v cannot be applied to a as it is, without changing a: the action is
// closed, the person voted already, or (an *ErrRequest) the values do not fit the form.
func (a *Action) Check(v Vote) error {
	_, _, err := a.check(v, "", time.Time{})
	return err
}

// Reserve holds a for request req until until, for v, once v can be applied: the request
// decides it later (Decide with req), or lets it go (Unhold).
func (a *Action) Reserve(v Vote, req string, until, now time.Time) error {
	if _, _, err := a.check(v, req, now); err != nil {
		return err
	}
	a.Hold, a.HoldUntil = req, until.UTC()
	return nil
}

// Unhold lets go of a hold of request req.
func (a *Action) Unhold(req string) bool {
	if a.Hold != req || req == "" {
		return false
	}
	a.Hold, a.HoldUntil = "", time.Time{}
	return true
}

// heldBy reports whether a request other than req holds a at now.
func (a *Action) heldBy(req string, now time.Time) bool {
	return a.Hold != "" && a.Hold != req && !now.IsZero() && now.Before(a.HoldUntil)
}

func (a *Action) check(v Vote, req string, now time.Time) (map[string]any, []string, error) {
	if a.Repeats(v) {
		return nil, nil, ErrSameVote
	}
	if !a.Status.Open() {
		return nil, nil, ErrActionClosed
	}
	if a.heldBy(req, now) {
		return nil, nil, ErrActionBusy
	}
	if a.Voted(v.By.ID) {
		return nil, nil, ErrVotedAlready
	}
	if len(v.Comments) > MaxCommentBytes {
		return nil, nil, &ErrRequest{Message: fmt.Sprintf("Comments may hold at most %d bytes.", MaxCommentBytes)}
	}
	if a.Type != ManualAction || !v.Approved {
		return nil, nil, nil
	}
	return CheckForm(a.Form, v.Values)
}

// Repeats reports whether v is the decision its person has made on a already: the same
// approval or rejection with the same comments and, completing a manual action, the same
// values as the form kept them. It holds whether or not the action is still open.
func (a *Action) Repeats(v Vote) bool {
	i := slices.IndexFunc(a.Actioners, func(x Actioner) bool { return x.ID == v.By.ID })
	if i < 0 {
		return false
	}
	was := a.Actioners[i]
	if was.Approved != v.Approved || was.Comments != v.Comments {
		return false
	}
	if a.Type != ManualAction || !v.Approved {
		return true
	}
	values, _, err := CheckForm(a.Form, v.Values)
	if err != nil {
		return false
	}
	// Compared as JSON: the stored values come back from the database with its types
	// (an int32 for a number sent as 3).
	give, err1 := json.Marshal(values)
	kept, err2 := json.Marshal(a.Values)
	return err1 == nil && err2 == nil && bytes.Equal(give, kept)
}

// Decide applies v to a at now, for request req (empty for a request of one decision): an
// approval is approved by Required distinct approvals and rejected by one rejection; a
// manual action is decided by its one decision, approved with the form's values. A hold
// of req's ends with it.
func (a *Action) Decide(v Vote, req string, now time.Time) error {
	values, secret, err := a.check(v, req, now)
	if err != nil {
		return err
	}
	a.Unhold(req)
	now = now.UTC()
	a.Actioners = append(a.Actioners, Actioner{ID: v.By.ID, Name: v.By.Name, Email: v.By.Email,
		Approved: v.Approved, Comments: v.Comments, Date: now})
	switch {
	case !v.Approved:
		a.Status = ActionRejected
	case a.Type == ManualAction:
		a.Status, a.Values, a.SecretValues = ActionApproved, values, secret
	case a.Approvals() >= a.Required:
		a.Status = ActionApproved
	}
	if !a.Status.Open() {
		a.DecidedAt = now
	}
	return nil
}

// Close ends an action nobody decided (its task timed out, its run stopped) as status,
// saying why.
func (a *Action) Close(status ActionStatus, reason string, now time.Time) bool {
	if !a.Status.Open() {
		return false
	}
	a.Status, a.Reason, a.DecidedAt = status, reason, now.UTC()
	return true
}

// Outcome is what a decided action does to its task: the status it ends the task with,
// a message, and the results (a manual form's values as text) with those that are secret.
func (a *Action) Outcome() (status ActionStatus, msg string, results map[string]string, secret []string) {
	var who []string
	for _, v := range a.Actioners {
		if v.Approved == (a.Status == ActionApproved) {
			who = append(who, v.Name+commentOf(v))
		}
	}
	verb := string(a.Status)
	switch {
	case a.Reason != "":
		msg = a.Reason
	case len(who) > 0:
		msg = verb + " by " + strings.Join(who, ", ")
	}
	if a.Status == ActionApproved && len(a.Values) > 0 {
		results = make(map[string]string, len(a.Values))
		for k, v := range a.Values {
			results[k] = Text(v)
		}
	}
	return a.Status, msg, results, a.SecretValues
}

func commentOf(v Actioner) string {
	if v.Comments == "" {
		return ""
	}
	return ` ("` + v.Comments + `")`
}

// CheckForm checks values against a manual action's form: each field's type, options and
// length bounds, required fields present, no value outside the form. It answers the
// values to keep (defaults filled in) and the names of password fields, or an *ErrRequest
// naming each bad field.
func CheckForm(form []param.Param, values map[string]any) (map[string]any, []string, error) {
	out := map[string]any{}
	fields := map[string]string{}
	var secret []string
	defined := map[string]bool{}
	for _, p := range form {
		defined[p.Name] = true
		v, given := values[p.Name]
		if !given || v == nil || v == "" {
			if def, err := decode(firstPresent(p.Value, p.Default)); err == nil && def != nil {
				v, given = def, true
			}
		}
		if !given || v == nil || v == "" {
			if p.Required {
				fields["params."+p.Name] = "is required"
			}
			continue
		}
		if msg := checkField(p, v); msg != "" {
			fields["params."+p.Name] = msg
			continue
		}
		out[p.Name] = v
		if p.Type == "password" {
			secret = append(secret, p.Name)
		}
	}
	for name := range values {
		if !defined[name] {
			fields["params."+name] = "is not a field of the form"
		}
	}
	if len(fields) > 0 {
		return nil, nil, &ErrRequest{Message: "The values do not fit the action's form.", Fields: fields}
	}
	slices.Sort(secret)
	return out, secret, nil
}

// checkField answers what is wrong with v as the value of field p, or "".
func checkField(p param.Param, v any) string {
	keys := func() []string {
		out := make([]string, len(p.Options))
		for i, o := range p.Options {
			out[i] = o.Key
		}
		return out
	}
	switch p.Type {
	case "number":
		if _, err := number(v); err != nil {
			return "must be a number"
		}
		return ""
	case "boolean":
		switch x := v.(type) {
		case bool:
			return ""
		case string:
			if x == "true" || x == "false" {
				return ""
			}
		}
		return "must be true or false"
	case "json":
		return ""
	case "select":
		s, ok := v.(string)
		if !ok || (len(p.Options) > 0 && !slices.Contains(keys(), s)) {
			return "must be one of " + strings.Join(keys(), ", ")
		}
		return ""
	case "multiselect":
		list, ok := v.([]any)
		if !ok {
			return "must be a list of the options"
		}
		for _, e := range list {
			if s, ok := e.(string); !ok || (len(p.Options) > 0 && !slices.Contains(keys(), s)) {
				return "must hold only " + strings.Join(keys(), ", ")
			}
		}
		return ""
	}
	s, ok := v.(string)
	if !ok {
		return "must be text"
	}
	n := utf8.RuneCountInString(s)
	if p.MinValueLength != nil && n < *p.MinValueLength {
		return fmt.Sprintf("must be at least %d characters", *p.MinValueLength)
	}
	if p.MaxValueLength != nil && n > *p.MaxValueLength {
		return fmt.Sprintf("must be at most %d characters", *p.MaxValueLength)
	}
	switch p.Type {
	case "email":
		if _, err := mail.ParseAddress(s); err != nil || strings.ContainsAny(s, "<> ") {
			return "must be an email address"
		}
	case "url":
		if u, err := url.ParseRequestURI(s); err != nil || u.Scheme == "" || u.Host == "" {
			return "must be an absolute URL"
		}
	}
	return ""
}
