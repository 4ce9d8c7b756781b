package events

import "time"

// Team event types, published by the identity service on TeamEvents with the team's name
// as key. Each payload type below names the type it travels under.
const (
	// TypeTeamCreated is a team being created; data is TeamCreated.
	TypeTeamCreated = "io.baton.team.created"
	// TypeTeamDeleted is a team being deleted; data is TeamDeleted.
	TypeTeamDeleted = "io.baton.team.deleted"
)

// AllTypes lists every CloudEvent type of the contract. Each has a golden fixture,
// testdata/<type>.json, and a test fails when a Type constant is missing here.
var AllTypes = []string{
	TypeTeamCreated, TypeTeamDeleted,
	TypeWorkflowSaved, TypeWorkflowDeleted,
	TypeRunRequested, TypeStatusWorkflowRun, TypeStatusTaskRun, TypeStatusAction, TypeStatusRecorded,
	TypeTaskDispatch, TypeTaskUpdate,
}

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
