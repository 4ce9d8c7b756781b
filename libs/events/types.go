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
