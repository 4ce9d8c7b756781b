// Package storetest is the contract every store of the identity service keeps, as one
// suite of tests run against each implementation (the Mongo store on the embedded
// MongoDB-wire server, and the SQLite one): what the use cases rely on, whatever keeps the
// data.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/baton-flow/baton/services/identity/internal/app"
)

// Publisher receives the events a relay publishes.
type Publisher interface {
	Publish(ctx context.Context, topic, key string, e event.Event) error
}

// Relay publishes a store's owed team events once a sweep.
type Relay interface {
	Sweep(ctx context.Context) error
}

// Stores are the ports of one implementation, over one empty database.
type Stores struct {
	Teams      app.TeamStore
	TokenTeams app.TokenTeams
	Users      app.UserStore
	Tokens     app.TokenStore
	Params     app.ParamStore
	System     app.SystemStore
	// NewRelay returns the relay of the teams' events, publishing to p.
	NewRelay func(p Publisher) Relay
}

// NewStores returns empty stores, of one implementation, for one test.
type NewStores func(t *testing.T) Stores

// Run runs the whole contract against the stores newStores makes.
func Run(t *testing.T, newStores NewStores) {
	tests := []struct {
		name string
		test func(t *testing.T, s Stores)
	}{
		{"teams are created once by name and read back whole", createAndFindTeams},
		{"a team is updated on the version it was read at, fn applied anew after a lost race", updateTeamIsConditional},
		{"concurrent updates of a team are all kept", concurrentTeamUpdates},
		{"team searches filter by name, status, label and member, sort both ways and page with exact totals", teamSearches},
		{"a deleted team frees its name and its record id no longer names a live team", deleteTeam},
		{"the events a team's creation and deletion owe are published once, in order", teamEvents},
		{"users are created once by email and found by id and email", createAndFindUsers},
		{"a user is updated on the version it was read at; an email taken is refused", updateUser},
		{"user searches filter by id, status and label, sort and page with exact totals", userSearches},
		{"tokens are found by hash and by id, and read back whole", createAndFindTokens},
		{"token searches see an audience, filter, sort and page with exact totals", tokenSearches},
		{"revoking a token revokes its descendants, keeping the first date", revokeTokens},
		{"revoking a user's tokens revokes those acting as them and those they made", revokeUserTokens},
		{"a token's last use is recorded", touchToken},
		{"global parameters are unique by name, listed by name, updated conditionally and deleted", params},
		{"settings and activation start empty and are written conditionally", system},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.test(t, newStores(t))
		})
	}
}

// at is a time the stores keep exactly: UTC, to the millisecond.
var at = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// ids are record ids of the form both stores take: 24 hex digits.
func id(n int) string {
	const hex = "0123456789abcdef"
	b := []byte("650000000000000000000000")
	for i := len(b) - 1; n > 0 && i >= 0; i-- {
		b[i] = hex[n%16]
		n /= 16
	}
	return string(b)
}
