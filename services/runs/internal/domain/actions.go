package domain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/param"
)

// ActionType is what an action asks of people.
type ActionType string

// Action types (the seed's Actions table).
const (
	ApprovalAction ActionType = "approval"
	ManualAction   ActionType = "manual"
)

// ActionTypes lists every action type.
var ActionTypes = []ActionType{ApprovalAction, ManualAction}

// ActionStatus is where an action is: open (submitted) or decided.
type ActionStatus string

// Action statuses (the seed's Actions table).
const (
	ActionSubmitted ActionStatus = "submitted"
	ActionApproved  ActionStatus = "approved"
	ActionRejected  ActionStatus = "rejected"
	ActionCancelled ActionStatus = "cancelled"
)

// ActionStatuses lists every action status.
var ActionStatuses = []ActionStatus{ActionApproved, ActionSubmitted, ActionRejected, ActionCancelled}

// Open reports whether an action in status s still takes decisions.
func (s ActionStatus) Open() bool { return s == ActionSubmitted }

// Action is what an approval or manual task asks of people while it waits: votes on an
// approval, a completed form on a manual task. Its id names the task run's attempt, so
// creating it again (after a crash) finds the one there is.
type Action struct {
	ID           string
	Team         string
	Type         ActionType
	Status       ActionStatus
	Workflow     string
	WorkflowName string
	RunID        string
	TaskRunID    string
	TaskName     string
	Attempt      int
	// Instructions are markdown shown to whoever acts.
	Instructions string
	// ApproverGroup names the team's approver group whose members alone may vote (its id
	// or name); empty lets any team member holding action/action vote.
	ApproverGroup string
	// Required is how many distinct approvals approve (numberOfApprovers).
	Required  int
	Actioners []Actioner
	// Form defines the values a manual action is completed with; Values are those given,
	// SecretValues names those of password type.
	Form         []param.Param
	Values       map[string]any
	SecretValues []string
	// Initiator is the person who started the run (a user id): with the setting
	// actions.preventSelfApproval on, they may not approve it.
	Initiator    string
	CreationDate time.Time
	// DecidedAt is when the action left submitted; Reason says why when no person decided
	// it (a timeout, a cancel).
	DecidedAt time.Time
	Reason    string
	// Hold names the request deciding several actions that holds this one until
	// HoldUntil: while it checks and decides its other items, no other request decides
	// this one, so the request applies all of its decisions or none.
	Hold      string
	HoldUntil time.Time
	// Applied marks a decision the run has taken: a decision stored but not applied (a
	// crash between the two) is applied again by the reconciler.
	Applied bool
	Version int64
}

// Actioner is one person's decision on an action.
type Actioner struct {
	ID       string
	Name     string
	Email    string
	Approved bool
	Comments string
	Date     time.Time
}

// ActionID is the id of the action of attempt of task run taskRun: the task run's id with
// its dot turned into a dash, then the attempt ("<run id>-<n>-<attempt>"). An action id
// holds no dot: v4's web UI uses it as a form field's path, which a dot splits.
func ActionID(taskRun string, attempt int) string {
	return fmt.Sprintf("%s-%d", strings.ReplaceAll(taskRun, ".", "-"), attempt)
}

// PublicActionID is the id action id is answered with. Actions made before ids lost their
// dot are stored under "<run id>.<n>-<attempt>"; they answer the id they would have now,
// which every lookup accepts (LegacyActionID).
func PublicActionID(id string) string { return strings.ReplaceAll(id, ".", "-") }

// LegacyActionID is the id an action of id (as ActionID makes them) was stored under
// before ids lost their dot; ok is false when id is not of that form.
func LegacyActionID(id string) (legacy string, ok bool) {
	j := strings.LastIndexByte(id, '-')
	if j < 0 || strings.Contains(id, ".") || !digits(id[j+1:]) {
		return "", false
	}
	i := strings.LastIndexByte(id[:j], '-')
	if i <= 0 || !digits(id[i+1:j]) {
		return "", false
	}
	return id[:i] + "." + id[i+1:], true
}

func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// Approvals counts the approving votes.
func (a *Action) Approvals() int {
	n := 0
	for _, v := range a.Actioners {
		if v.Approved {
			n++
		}
	}
	return n
}

// Voted reports whether person has decided on a already.
func (a *Action) Voted(person string) bool {
	return slices.ContainsFunc(a.Actioners, func(v Actioner) bool { return v.ID == person })
}

// ActionFilter selects a team's actions.
type ActionFilter struct {
	Team      string
	Types     []string
	Statuses  []string
	Workflows []string
	From, To  *time.Time
}

// ActionSort orders a search of actions: by Field ("creationDate", "name" or "status"),
// descending unless Asc.
type ActionSort struct {
	Field string
	Asc   bool
}

// ActionCounts are what a summary of actions counts over a filter: the open approvals and
// manual actions, and the approvals in all and those decided.
type ActionCounts struct {
	OpenApprovals, OpenManual  int64
	Approvals, ApprovalsClosed int64
}

// Waiter is an acquirelock task waiting for, or holding, a lock: the run, the task's index
// and the attempt.
type Waiter struct {
	Run     string
	Task    int
	Attempt int
	// At is when it asked.
	At time.Time
}

// Is reports whether w and o are the same task attempt, whenever each was read: a store
// may keep At less precisely than it was made.
func (w Waiter) Is(o Waiter) bool {
	return w.Run == o.Run && w.Task == o.Task && w.Attempt == o.Attempt
}

// Lock is a team's named lock: the run holding it and the tasks waiting for it, first come
// first served. A run holds a lock as a whole: its other acquirelock tasks on the key take
// it at once, and it is released by any of its releaselock tasks or by its end.
type Lock struct {
	Team, Key string
	// Holder is empty (Run == "") when nobody holds the lock.
	Holder Waiter
	Queue  []Waiter
	// Notified marks a holder whose run has been told: a grant stored but not told (a
	// crash between the two) is told again by the reconciler.
	Notified bool
	Version  int64
}

// Acquire gives the lock to w when it is free or w's run holds it already, and answers
// true; otherwise w waits in the queue (once) and Acquire answers false.
func (l *Lock) Acquire(w Waiter) bool {
	switch {
	case l.Holder.Run == "":
		l.Holder, l.Notified = w, false
		l.Queue = slices.DeleteFunc(l.Queue, func(q Waiter) bool { return q.Run == w.Run })
		return true
	case l.Holder.Run == w.Run:
		return true
	}
	if !slices.ContainsFunc(l.Queue, w.Is) {
		l.Queue = append(l.Queue, w)
	}
	return false
}

// Release lets run go of the lock, and of its places in the queue. When run held it, the
// next waiter holds it now, not yet told: next is that waiter.
func (l *Lock) Release(run string) (next Waiter, granted bool) {
	l.Queue = slices.DeleteFunc(l.Queue, func(q Waiter) bool { return q.Run == run })
	if l.Holder.Run != run {
		return Waiter{}, false
	}
	l.Holder, l.Notified = Waiter{}, true
	if len(l.Queue) == 0 {
		return Waiter{}, false
	}
	l.Holder, l.Queue, l.Notified = l.Queue[0], l.Queue[1:], false
	// A run waiting twice on one key (two tasks) holds it once: its other places go.
	l.Queue = slices.DeleteFunc(l.Queue, func(q Waiter) bool { return q.Run == l.Holder.Run })
	return l.Holder, true
}

// Leave takes w out of the queue (its task stopped waiting); it does not release a lock
// w's run holds.
func (l *Lock) Leave(w Waiter) {
	l.Queue = slices.DeleteFunc(l.Queue, func(q Waiter) bool {
		return q.Run == w.Run && q.Task == w.Task && q.Attempt == w.Attempt
	})
}

// Free reports whether nobody holds or waits for the lock: its record may go.
func (l *Lock) Free() bool { return l.Holder.Run == "" && len(l.Queue) == 0 }

// Grant is a lock given to a waiter, to be told to its run.
type Grant struct {
	Team, Key string
	To        Waiter
}

// Callback is a wait-for-event callback kept on a run for an eventwait task that has not
// started yet.
type Callback struct {
	Status Status
	// Data is the POST body as JSON text; empty when there was none.
	Data string
	At   time.Time
}
