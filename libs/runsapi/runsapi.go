// Package runsapi is the runs service's internal contract: the endpoints under
// /internal/v1 that Baton's own services call, their request and answer types, a typed
// client, and golden fixtures of the JSON (testdata). The runs service serves these types
// and its callers read them; neither side declares its own copy.
//
// Runners claim the attempts they receive and beat for them while they run:
//
//	POST /internal/v1/taskruns/{id}/claim      AttemptRequest → 200 ClaimAnswer
//	POST /internal/v1/taskruns/{id}/heartbeat  AttemptRequest → 200 HeartbeatAnswer
//
// Both answer 409 when the attempt is not (or no longer) the runner's and 404 when the
// task run is gone.
//
// The services deleting what runs belong to (workflows, identity) ask first, and identity
// reads a team's use of its run quotas:
//
//	GET  /internal/v1/teams/{team}/activeruns[?workflow=<name>]         → 200 ActiveRuns
//	POST /internal/v1/teams/{team}/activeruns/cancel[?workflow=<name>]  → 200 CancelledRuns
//	GET  /internal/v1/teams/{team}/usage[?counters=true]                → 200 Usage
//
// The schedules service submits the runs its fires owe, reads how the previous one is doing
// and cancels it, as its schedules' overlap policies say; the integrations service submits
// the runs of events, webhooks, code-host deliveries and chat commands:
//
//	POST /internal/v1/teams/{team}/workflows/{name}/runs  SubmitRun → 200 SubmittedRun
//	GET  /internal/v1/runs/{id}                           → 200 RunState
//	POST /internal/v1/runs/{id}/cancel                    CancelRun → 200 RunState
//
// A submit refused for the caller's own reasons (no such workflow, its trigger disabled, a
// quota used up) answers the contract's error (API.md §1); a run that is not there answers
// 404 WORKFLOWRUN_NOT_FOUND.
//
// Every one answers 403 PERMISSION_DENIED to a caller that is not one of Baton's services.
package runsapi

import (
	"net/url"
	"time"

	"github.com/baton-flow/baton/libs/events"
)

// Service is the name the runs service registers under in discovery.
const Service = "runs"

// Prefix is where the internal endpoints live; the routes below are relative to it, in the
// form a router registers (":id" and ":team" are path parameters).
const Prefix = "/internal/v1"

// Routes, for the runs service's router.
const (
	ClaimRoute            = "/taskruns/:id/claim"
	HeartbeatRoute        = "/taskruns/:id/heartbeat"
	ActiveRunsRoute       = "/teams/:team/activeruns"
	CancelActiveRunsRoute = "/teams/:team/activeruns/cancel"
	UsageRoute            = "/teams/:team/usage"
	SubmitRunRoute        = "/teams/:team/workflows/:name/runs"
	RunStateRoute         = "/runs/:id"
	CancelRunRoute        = "/runs/:id/cancel"
)

// ClaimPath is the path of a claim of task run id.
func ClaimPath(taskRunID string) string { return taskRunPath(taskRunID) + "/claim" }

// HeartbeatPath is the path of a heartbeat for task run id.
func HeartbeatPath(taskRunID string) string { return taskRunPath(taskRunID) + "/heartbeat" }

// ActiveRunsPath is the path of the count of team's runs that are not completed.
func ActiveRunsPath(team string) string { return teamPath(team) + "/activeruns" }

// CancelActiveRunsPath is the path that cancels them.
func CancelActiveRunsPath(team string) string { return ActiveRunsPath(team) + "/cancel" }

// UsagePath is the path of team's run usage.
func UsagePath(team string) string { return teamPath(team) + "/usage" }

// SubmitRunPath is the path that submits a run of team's workflow name.
func SubmitRunPath(team, name string) string {
	return teamPath(team) + "/workflows/" + url.PathEscape(name) + "/runs"
}

// RunStatePath is the path of run id's state.
func RunStatePath(id string) string { return Prefix + "/runs/" + url.PathEscape(id) }

// CancelRunPath is the path that cancels run id.
func CancelRunPath(id string) string { return RunStatePath(id) + "/cancel" }

func taskRunPath(id string) string { return Prefix + "/taskruns/" + url.PathEscape(id) }

func teamPath(team string) string { return Prefix + "/teams/" + url.PathEscape(team) }

// AttemptRequest is the body of a claim and of a heartbeat: which attempt of the task run,
// and the runner instance that runs it.
type AttemptRequest struct {
	Attempt int    `json:"attempt"`
	Runner  string `json:"runner"`
}

// ClaimAnswer is the answer of a claim that succeeded: the attempt is now the runner's.
type ClaimAnswer struct {
	Claimed bool `json:"claimed"`
}

// HeartbeatAnswer is the answer of a heartbeat: Cancel asks the runner to stop the attempt
// (its run was cancelled).
type HeartbeatAnswer struct {
	Cancel bool `json:"cancel"`
}

// ActiveRuns is the answer of GET …/activeruns: how many of the team's runs (of the
// workflow, when one is named) are not completed.
type ActiveRuns struct {
	Active int `json:"active"`
}

// CancelledRuns is the answer of POST …/activeruns/cancel: how many runs were cancelled.
type CancelledRuns struct {
	Cancelled int `json:"cancelled"`
}

// Usage is a team's use of its run quotas, named as the contract's quota fields. The runs
// service answers it from the counters it enforces (the month's runs, the held concurrency
// slots) and its runs of the month, so it is as current as they are.
type Usage struct {
	// CurrentRuns is how many runs the team submitted this month (UTC), as counted against
	// maxWorkflowRunMonthly.
	CurrentRuns int `json:"currentRuns"`
	// CurrentConcurrentRuns is how many of its runs hold a concurrency slot.
	CurrentConcurrentRuns int `json:"currentConcurrentRuns"`
	// CurrentRunTotalDuration and CurrentRunMedianDuration are over this month's runs, in
	// milliseconds.
	CurrentRunTotalDuration  int64 `json:"currentRunTotalDuration"`
	CurrentRunMedianDuration int64 `json:"currentRunMedianDuration"`
	// MonthlyResetDate is when CurrentRuns starts again from 0: the first of next month.
	MonthlyResetDate time.Time `json:"monthlyResetDate"`
}

// MonthStart is the start of the month of t, in UTC: the month Usage.CurrentRuns counts.
func MonthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// SubmitRun asks for a run of a workflow on behalf of one of Baton's own services (a
// schedule's fire), as an API client's WorkflowSubmitRequest would, with the trigger and
// initiator it names.
type SubmitRun struct {
	// Params are values by parameter name, over the workflow's defaults.
	Params map[string]any `json:"params,omitempty"`
	// Secret names the params that hold a secret though the workflow does not declare
	// them password: a schedule's that a run made from its secrets. The run masks and
	// seals them as it does its password params.
	Secret []string          `json:"secret,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	// Trigger is the run's trigger: schedule, event, webhook, codehost or chat. The
	// workflow's trigger of that name must be enabled; chat runs are started by hand, so
	// they need the manual trigger.
	Trigger string `json:"trigger"`
	// IdempotencyKey makes the request sent twice one run: the runs service keeps it for 24
	// hours per team and workflow, as it does for API submits.
	IdempotencyKey string    `json:"idempotencyKey"`
	InitiatedBy    Initiator `json:"initiatedBy"`
}

// Initiator says who starts a run: a principal's type, id and display name, and the person
// answerable for it (whom actions.preventSelfApproval keeps from approving the run).
type Initiator struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Name   string `json:"name,omitempty"`
	Person string `json:"person,omitempty"`
}

// SubmittedRun is the answer of a submit: the run, and whether this request created it
// (false when its idempotency key named an earlier one).
type SubmittedRun struct {
	RunState
	Created bool `json:"created"`
	// Run is the run as the API answers it (without its tasks), for callers that answer
	// their own callers with it.
	Run *events.WorkflowRun `json:"run,omitempty"`
}

// RunState is a run's status and phase (API.md §4).
type RunState struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Phase  string `json:"phase"`
}

// Completed reports whether the run has ended (phase completed or finalized).
func (s RunState) Completed() bool { return s.Phase == "completed" || s.Phase == "finalized" }

// CancelRun is the body of a cancel: why, as the run's status message says.
type CancelRun struct {
	Reason string `json:"reason"`
}
