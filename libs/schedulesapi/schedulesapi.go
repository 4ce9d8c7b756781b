// Package schedulesapi is the schedules service's internal contract: the endpoints under
// /internal/v1 that Baton's own services call, their request and answer types, a typed
// client, and golden fixtures of the JSON (testdata). The schedules service serves these
// types and its callers read them; neither side declares its own copy.
//
// The runs service makes the runOnce schedules its runscheduledworkflow tasks ask for, on
// behalf of the run's initiator:
//
//	POST /internal/v1/teams/{team}/schedules  CreateSchedule → 200 CreatedSchedule
//
// The request's key makes it idempotent: the same key of the same team answers the
// schedule it made first, whatever the request says then, so a step sent again (a crash, a
// lost answer) makes no second schedule. A request refused for its own reasons (no such
// workflow, a date in the past, a zone that is not one) answers the contract's error (API.md
// §1). Every endpoint answers 403 PERMISSION_DENIED to a caller that is not one of Baton's
// services.
package schedulesapi

import (
	"net/url"
	"time"
)

// Service is the name the schedules service registers under in discovery.
const Service = "schedules"

// Prefix is where the internal endpoints live; the routes below are relative to it, in the
// form a router registers (":team" is a path parameter).
const Prefix = "/internal/v1"

// Routes, for the schedules service's router.
const (
	CreateScheduleRoute = "/teams/:team/schedules"
)

// CreateSchedulePath is the path that makes a runOnce schedule of team.
func CreateSchedulePath(team string) string {
	return Prefix + "/teams/" + url.PathEscape(team) + "/schedules"
}

// MaxKeyLength bounds a CreateSchedule's key.
const MaxKeyLength = 256

// CreateSchedule asks for a runOnce schedule of a workflow of the team, made by CreatedBy:
// its runs are started on their behalf.
type CreateSchedule struct {
	// Key makes the request idempotent (at most MaxKeyLength characters): the schedule
	// made under it is the team's one for the key, for as long as the schedule exists.
	Key string `json:"key"`
	// WorkflowRef is the workflow's name in the team.
	WorkflowRef string `json:"workflowRef"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Date is when the schedule fires, an instant (RFC 3339, UTC); it must be ahead.
	Date time.Time `json:"date"`
	// Timezone is the IANA zone the schedule is shown in.
	Timezone string `json:"timezone"`
	// Params are the scheduled run's values by parameter name, over the workflow's
	// defaults; Secret names those that came from a secret, which the schedule masks in
	// its answers as it does the workflow's password params.
	Params    map[string]any    `json:"params,omitempty"`
	Secret    []string          `json:"secret,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
	CreatedBy Initiator         `json:"createdBy"`
}

// Initiator says who makes a schedule: a principal's type, id and display name, and the
// person answerable for it (whom the runs it starts are started for).
type Initiator struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Name   string `json:"name,omitempty"`
	Person string `json:"person,omitempty"`
}

// CreatedSchedule is the answer of a CreateSchedule: the schedule, and whether this request
// made it (false when its key named an earlier one, whose date is answered).
type CreatedSchedule struct {
	ID   string    `json:"id"`
	Date time.Time `json:"date"`
	// TriggerDisabled is set while the workflow's schedule trigger is off: the schedule
	// does not fire until it is turned on.
	TriggerDisabled bool `json:"triggerDisabled"`
	Created         bool `json:"created"`
}
