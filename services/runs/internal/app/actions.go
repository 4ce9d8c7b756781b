package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/view"
)

// ActionView is the contract's Action, as answered.
type ActionView = view.Action

// Approvers reads a team's approver groups (identity).
type Approvers interface {
	ApproverGroups(ctx context.Context, team string) ([]ApproverGroup, error)
}

// ApproverGroup is one of a team's approver groups: its id, name and members' user ids.
type ApproverGroup struct {
	ID, Name  string
	Approvers []string
}

// Decision is one item of a request deciding actions.
type Decision struct {
	ID       string
	Approved bool
	Comments string
	// Values complete a manual action's form.
	Values map[string]any
}

// MaxDecisions bounds the items of one request deciding actions.
const MaxDecisions = 100

// Decide applies decisions on team's actions by a person: all of them or, when one cannot
// be applied (unknown, of another team, closed, a vote the person may not cast, values
// that do not fit a form), none. A decision that closes an action ends its task at once.
//
// Every item is checked before any is stored. One decision is one conditional write.
// Several are first held, each action in id order (so two requests never wait for each
// other), checked again as it is held: no other request decides an action while it is
// held, and a refusal lets go of those held. Only then are they decided. (A crash between
// the first decision and the last leaves the rest held until their hold runs out.)
func (a *App) Decide(ctx context.Context, team string, by domain.Actioner, items []Decision) error {
	if len(items) == 0 || len(items) > MaxDecisions {
		return apperr.New(apperr.RequestInvalid, "Send from 1 to %d decisions.", MaxDecisions)
	}
	seen := map[string]bool{}
	for i, d := range items {
		if d.ID == "" {
			return fieldError(i, "id", "is required")
		}
		if seen[d.ID] {
			return fieldError(i, "id", "action '"+d.ID+"' is decided twice in the request")
		}
		seen[d.ID] = true
	}
	var groups []ApproverGroup
	var tc *TeamContext
	// todo are the items to apply, at their indexes in items; repeats the ids of those
	// that repeat the person's decision as the action shows it already.
	var todo []Decision
	var at []int
	var repeats []string
	for i, d := range items {
		act, err := a.acts.FindAction(ctx, d.ID)
		if err == nil && act.Team != team {
			err = actionNotFound(d.ID)
		}
		if err != nil {
			return err
		}
		if act.Type == domain.ApprovalAction && act.ApproverGroup != "" && groups == nil {
			if a.approvers == nil {
				return apperr.New(apperr.UpstreamUnreachable, "The team's approver groups cannot be read.")
			}
			if groups, err = a.approvers.ApproverGroups(ctx, team); err != nil {
				return err
			}
		}
		if act.Type == domain.ApprovalAction && d.Approved && act.Initiator == by.ID && tc == nil {
			// Read afresh: the four-eyes rule holds from the moment it is turned on.
			c, err := a.ctxs.fresh(ctx, team)
			if err != nil {
				return err
			}
			tc = &c
		}
		err = a.mayDecide(act, d, by, groups, tc)
		switch {
		case errors.Is(err, domain.ErrSameVote):
			repeats = append(repeats, d.ID)
			continue
		case err != nil:
			return itemError(i, err)
		}
		todo = append(todo, d)
		at = append(at, i)
	}
	req := ""
	if len(todo) > 1 {
		req = uuid.NewString()
		if err := a.holdAll(ctx, req, todo, at, by); err != nil {
			return err
		}
	}
	var decided []*domain.Action
	for j, d := range todo {
		stored, err := a.updateAction(ctx, d.ID, func(act *domain.Action) error {
			return act.Decide(vote(d, by), req, a.now())
		})
		if errors.Is(err, domain.ErrSameVote) {
			// The same decision sent at once by another request of this person's.
			repeats = append(repeats, d.ID)
			continue
		}
		if err != nil {
			if req != "" {
				a.unholdAll(ctx, req, todo[j:])
			}
			return itemError(at[j], err)
		}
		if !stored.Status.Open() {
			decided = append(decided, stored)
		}
	}
	// A decision repeated (its first answer lost: a replica died before answering, and
	// the request went to another) is answered as the success it was; one that closed its
	// action and was not yet given to its task is given now, as the first would have.
	for _, id := range repeats {
		act, err := a.acts.FindAction(ctx, id)
		if err == nil && !act.Status.Open() && !act.Applied {
			decided = append(decided, act)
		}
	}
	var errs []error
	for _, act := range decided {
		// Stored as decided: a failure here is applied again by the reconciler.
		if err := a.engine.ApplyDecision(ctx, act); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		a.log.Warn("decisions stored, not yet applied", "error", err)
	}
	return nil
}

// holdFor is how long a request deciding several actions holds them: far longer than it
// takes, and short enough that a crash midway releases them soon. busyWait is how long a
// decision waits for another request's hold to end.
const (
	holdFor  = 30 * time.Second
	busyWait = 2 * time.Second
)

// holdAll holds the actions of items for request req, in id order, or none of them; at
// are the items' indexes in the request, for its errors.
func (a *App) holdAll(ctx context.Context, req string, items []Decision, at []int, by domain.Actioner) error {
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int { return strings.Compare(items[x].ID, items[y].ID) })
	var held []Decision
	for _, i := range order {
		d := items[i]
		_, err := a.updateAction(ctx, d.ID, func(act *domain.Action) error {
			now := a.now()
			return act.Reserve(vote(d, by), req, now.Add(holdFor), now)
		})
		if errors.Is(err, domain.ErrSameVote) {
			// Decided so meanwhile by another request of this person's: deciding it
			// finds the same, and answers it as a repeat.
			continue
		}
		if err != nil {
			a.unholdAll(ctx, req, held)
			return itemError(at[i], err)
		}
		held = append(held, d)
	}
	return nil
}

// unholdAll lets go of request req's holds on the actions of items.
func (a *App) unholdAll(ctx context.Context, req string, items []Decision) {
	for _, d := range items {
		_, err := a.acts.UpdateAction(context.WithoutCancel(ctx), d.ID, func(act *domain.Action) error {
			if !act.Unhold(req) {
				return errNothingHeld
			}
			return nil
		})
		if err != nil && !errors.Is(err, errNothingHeld) {
			// It runs out on its own (holdFor).
			a.log.Warn("cannot let go of an action", "action", d.ID, "error", err)
		}
	}
}

var errNothingHeld = errors.New("not held")

// updateAction is the store's UpdateAction, waiting up to busyWait while another request
// holds the action.
func (a *App) updateAction(ctx context.Context, id string, fn func(*domain.Action) error) (*domain.Action, error) {
	deadline := time.Now().Add(busyWait)
	for pause := 5 * time.Millisecond; ; pause *= 2 {
		act, err := a.acts.UpdateAction(ctx, id, fn)
		if !errors.Is(err, domain.ErrActionBusy) || time.Now().Add(pause).After(deadline) {
			return act, err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// mayDecide checks that by may cast decision d on act, as far as the request alone tells.
func (a *App) mayDecide(act *domain.Action, d Decision, by domain.Actioner, groups []ApproverGroup, tc *TeamContext) error {
	if act.Type == domain.ApprovalAction && act.ApproverGroup != "" {
		i := slices.IndexFunc(groups, func(g ApproverGroup) bool { return g.ID == act.ApproverGroup || g.Name == act.ApproverGroup })
		if i < 0 {
			return apperr.New(apperr.PermissionDenied, "Action '%s' is for approver group '%s', which the team no longer has.", act.ID, act.ApproverGroup)
		}
		if !slices.Contains(groups[i].Approvers, by.ID) {
			return apperr.New(apperr.PermissionDenied, "Only members of approver group '%s' may decide action '%s'.", groups[i].Name, act.ID)
		}
	}
	if tc != nil && tc.PreventSelfApproval && act.Type == domain.ApprovalAction && d.Approved && act.Initiator == by.ID {
		return apperr.New(apperr.PermissionDenied, "Action '%s' is of a run you started: with the setting actions.preventSelfApproval, somebody else must approve it.", act.ID)
	}
	return act.Check(vote(d, by))
}

func vote(d Decision, by domain.Actioner) domain.Vote {
	return domain.Vote{By: by, Approved: d.Approved, Comments: d.Comments, Values: d.Values}
}

// itemError turns a refusal of item i into the contract's error, naming the item.
func itemError(i int, err error) error {
	var re *domain.ErrRequest
	switch {
	case errors.Is(err, domain.ErrActionClosed):
		return apperr.New(apperr.ActionUnableToAction, "Item %d: the action is decided or cancelled already.", i)
	case errors.Is(err, domain.ErrVotedAlready):
		return apperr.New(apperr.ActionUnableToAction, "Item %d: you have decided on this action already.", i)
	case errors.Is(err, domain.ErrActionBusy):
		return apperr.New(apperr.ActionUnableToAction, "Item %d: another request is deciding this action; try again.", i)
	case errors.As(err, &re):
		e := apperr.New(apperr.RequestInvalid, "Item %d: %s", i, re.Message)
		for _, f := range slices.Sorted(maps.Keys(re.Fields)) {
			e.Fields = append(e.Fields, apperr.FieldError{Field: fmt.Sprintf("[%d].%s", i, f), Message: re.Fields[f]})
		}
		return e
	}
	if ae, ok := apperr.As(err); ok {
		ae.Message = fmt.Sprintf("Item %d: %s", i, ae.Message)
		return ae
	}
	return err
}

func fieldError(i int, field, msg string) error {
	e := apperr.New(apperr.RequestInvalid, "Item %d: %s %s.", i, field, msg)
	e.Fields = []apperr.FieldError{{Field: fmt.Sprintf("[%d].%s", i, field), Message: msg}}
	return e
}

func actionNotFound(id string) error {
	return apperr.New(apperr.ActionNotFound, "Action '%s' was not found.", id)
}

// Action reads one of team's actions.
func (a *App) Action(ctx context.Context, team, id string) (ActionView, error) {
	act, err := a.acts.FindAction(ctx, id)
	if err == nil && act.Team != team {
		err = actionNotFound(id)
	}
	if err != nil {
		return ActionView{}, err
	}
	return view.OfAction(act), nil
}

// FindActions answers one page of the actions f selects, in order s, and how many it
// selects in all.
func (a *App) FindActions(ctx context.Context, f domain.ActionFilter, s domain.ActionSort, p page.Request) ([]ActionView, int64, error) {
	list, total, err := a.acts.FindActions(ctx, f, s, p)
	if err != nil {
		return nil, 0, err
	}
	out := make([]ActionView, len(list))
	for i, act := range list {
		out[i] = view.OfAction(act)
	}
	return out, total, nil
}

// ActionSummary is the contract's ActionSummary: open approvals and manual actions, and
// the percentage of the window's approvals that have been decided.
type ActionSummary struct {
	Approvals     int64 `json:"approvals"`
	Manual        int64 `json:"manual"`
	ApprovalsRate int64 `json:"approvalsRate"`
}

// SummarizeActions counts the actions f selects.
func (a *App) SummarizeActions(ctx context.Context, f domain.ActionFilter) (ActionSummary, error) {
	c, err := a.acts.CountActions(ctx, f)
	if err != nil {
		return ActionSummary{}, err
	}
	s := ActionSummary{Approvals: c.OpenApprovals, Manual: c.OpenManual}
	if c.Approvals > 0 {
		s.ApprovalsRate = (c.ApprovalsClosed*100 + c.Approvals/2) / c.Approvals
	}
	return s, nil
}
