package integrations

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/libs/apperr"
)

// A name that cannot be a team's is no team, and identity is not asked (the peer has no
// client here: asking would panic).
func TestTeamsPeerRefusesWhatIsNoTeamName(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"", strings.Repeat("h", 100_000), "Ops", "a b", "ops\x00", "../ops", "é"} {
		err := teamsPeer{}.Team(context.Background(), name)
		assert.True(t, apperr.HasReason(err, apperr.TeamNotFound), "%.20q: %v", name, err)
	}
}
