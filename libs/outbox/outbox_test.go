package outbox_test

import (
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/outbox"
)

func TestNewEntry(t *testing.T) {
	t.Parallel()
	valid, err := events.New("team-created-1", events.Source("test"), events.TypeTeamCreated, "/team/x",
		events.TeamCreated{ID: "1", Name: "x"})
	require.NoError(t, err)
	// An event without a source fails validation, so it can never be stored.
	invalid := event.New()
	invalid.SetID("broken")
	invalid.SetType(events.TypeTeamCreated)

	tests := []struct {
		name    string
		give    event.Event
		wantErr bool
	}{
		{name: "valid", give: valid},
		{name: "invalid", give: invalid, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := outbox.NewEntry(events.TeamEvents, "x", tt.give)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.give.ID(), got.ID)
			assert.Equal(t, events.TeamEvents, got.Topic)
			assert.Equal(t, "x", got.Key)
			back, err := events.Unmarshal(got.Event)
			require.NoError(t, err, "the stored event reads back")
			assert.Equal(t, tt.give.ID(), back.ID())
			assert.Equal(t, tt.give.Data(), back.Data())
		})
	}
}
