// Package domain holds the workflows service's types and rules: plain Go, no transport
// or storage.
package domain

import "time"

// Team is the workflows service's record of a team that identity announced. Workflows
// exist only inside known teams.
type Team struct {
	// ID is identity's record id: a team deleted and created again under the same name is
	// another team.
	ID           string
	Name         string
	DisplayName  string
	CreationDate time.Time
}
