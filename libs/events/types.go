package events

import "time"

// CloudEvent types. Each payload type below names the type it travels under.
const (
	// TypeTeamCreated is a team being created; data is TeamCreated.
	TypeTeamCreated = "io.baton.team.created"
	// TypeTeamDeleted is a team being deleted; data is TeamDeleted.
	TypeTeamDeleted = "io.baton.team.deleted"
	// TypeWorkflowRunStatus is a run's status change, also delivered to outgoing HTTP sinks
	// (API contract §7); subject is "/workflowrun/<id>/status/<status>", data the run.
	TypeWorkflowRunStatus = "io.baton.event.status.workflowrun"
	// TypeTaskRunStatus is a task run's status change, delivered like TypeWorkflowRunStatus;
	// data is the task run.
	TypeTaskRunStatus = "io.baton.event.status.taskrun"
)

// TeamCreated is the data of TypeTeamCreated.
type TeamCreated struct {
	// ID is the team record's id.
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	DisplayName  string    `json:"displayName"`
	CreationDate time.Time `json:"creationDate"`
}

// TeamDeleted is the data of TypeTeamDeleted.
type TeamDeleted struct {
	// ID is the team record's id.
	ID   string `json:"id"`
	Name string `json:"name"`
}
