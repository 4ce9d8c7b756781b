package kafkax_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/kafkax"
)

// OnTeamDeleted calls its function for deleted teams only, with the team and the time of
// the deletion, and calls data it cannot read permanent.
func TestOnTeamDeleted(t *testing.T) {
	t.Parallel()
	var got []string
	var at time.Time
	h := kafkax.OnTeamDeleted(func(_ context.Context, d events.TeamDeleted, when time.Time) error {
		got, at = append(got, d.Name), when
		return nil
	})
	deleted, err := events.New("team-deleted-1", events.Source("identity"), events.TypeTeamDeleted, "/team/ops", events.TeamDeleted{ID: "1", Name: "ops"})
	require.NoError(t, err)
	created, err := events.New("team-created-2", events.Source("identity"), events.TypeTeamCreated, "/team/dev", events.TeamCreated{ID: "2", Name: "dev"})
	require.NoError(t, err)
	require.NoError(t, h(context.Background(), deleted))
	require.NoError(t, h(context.Background(), created))
	assert.Equal(t, []string{"ops"}, got)
	assert.Equal(t, deleted.Time(), at)

	bad := event.New()
	bad.SetID("x")
	bad.SetSource("/baton/identity")
	bad.SetType(events.TypeTeamDeleted)
	require.NoError(t, bad.SetData(event.ApplicationJSON, []byte(`"not an object"`)))
	err = h(context.Background(), bad)
	require.Error(t, err)
	assert.True(t, errors.Is(err, kafkax.ErrPermanent), "%v", err)
}
