package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

// link is an update that makes an installation known, active and linked to team.
func link(team string) func(*domain.Installation) error {
	return func(in *domain.Installation) error {
		in.AccountLogin, in.AccountType, in.Known, in.Status = "acme", "Organization", true, domain.InstallationActive
		in.Repositories, in.Events = []string{"acme/api", "acme/web"}, []string{"push", "pull_request"}
		in.CreatedAt, in.Updated = at.Add(-time.Hour), at
		in.Team, in.LinkedBy, in.LinkedAt, in.LinkIssued = team, "u-own", at, at.Add(-time.Minute)
		return nil
	}
}

func installations(t *testing.T, all Stores) {
	s := all.CodeHost
	ctx := context.Background()
	_, err := s.FindInstallation(ctx, 1)
	assert.ErrorIs(t, err, domain.ErrInstallationNotFound)

	created, err := s.UpdateInstallation(ctx, 1, func(in *domain.Installation) error {
		assert.Equal(t, domain.Installation{ID: 1}, *in, "a new one, with only its id")
		return link("ops")(in)
	})
	require.NoError(t, err)
	assert.EqualValues(t, 1, created.Version)
	assert.EqualValues(t, 1, created.ID)
	got, err := s.FindInstallation(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, created, got, "read back whole")

	refused := errors.New("refused")
	_, err = s.UpdateInstallation(ctx, 1, func(in *domain.Installation) error {
		in.Team = "dev"
		return refused
	})
	assert.ErrorIs(t, err, refused)
	_, err = s.UpdateInstallation(ctx, 2, func(*domain.Installation) error { return refused })
	assert.ErrorIs(t, err, refused)
	got, err = s.FindInstallation(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, created, got, "fn's error writes nothing")
	_, err = s.FindInstallation(ctx, 2)
	assert.ErrorIs(t, err, domain.ErrInstallationNotFound, "nor creates anything")

	updated, err := s.UpdateInstallation(ctx, 1, func(in *domain.Installation) error {
		assert.Equal(t, created, *in, "fn sees the stored installation")
		in.Status, in.Repositories = domain.InstallationSuspended, nil
		return nil
	})
	require.NoError(t, err)
	assert.EqualValues(t, 2, updated.Version)
	got, err = s.FindInstallation(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, updated, got)

	for _, id := range []int64{30, 3, 20} {
		_, err := s.UpdateInstallation(ctx, id, link(map[bool]string{true: "ops", false: "dev"}[id != 20]))
		require.NoError(t, err)
	}
	ops, err := s.FindInstallationsByTeam(ctx, "ops")
	require.NoError(t, err)
	var ids []int64
	for _, in := range ops {
		ids = append(ids, in.ID)
	}
	assert.Equal(t, []int64{1, 3, 30}, ids, "by id")
	none, err := s.FindInstallationsByTeam(ctx, "nobody")
	require.NoError(t, err)
	assert.Empty(t, none)
}

// concurrentInstallationUpdates: updates racing on one installation, the first of them
// creating it (its first delivery and a landing of the install flow at once), are each
// applied once, to what the others wrote: one creates it, and the others, finding its id
// taken, read it and apply theirs again.
func concurrentInstallationUpdates(t *testing.T, all Stores) {
	s := all.CodeHost
	ctx := context.Background()
	const n = 12
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, err := s.UpdateInstallation(ctx, 5, func(in *domain.Installation) error {
				if in.Version == 0 {
					if err := link("ops")(in); err != nil {
						return err
					}
				}
				in.Events = append(in.Events, fmt.Sprint("e", i))
				return nil
			})
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	got, err := s.FindInstallation(ctx, 5)
	require.NoError(t, err)
	assert.Len(t, got.Events, 2+n, "created once, no update lost")
	assert.EqualValues(t, n, got.Version)
	assert.Equal(t, "ops", got.Team)
}

func unlinkTeam(t *testing.T, all Stores) {
	s := all.CodeHost
	ctx := context.Background()
	for id, team := range map[int64]string{1: "ops", 2: "ops", 3: "dev"} {
		_, err := s.UpdateInstallation(ctx, id, link(team))
		require.NoError(t, err)
	}
	before, err := s.FindInstallation(ctx, 1)
	require.NoError(t, err)
	require.NoError(t, s.UnlinkTeam(ctx, "ops"))
	require.NoError(t, s.UnlinkTeam(ctx, "nobody"))

	got, err := s.FindInstallation(ctx, 1)
	require.NoError(t, err)
	want := before
	want.Team, want.LinkedBy, want.LinkedAt, want.LinkIssued, want.Version = "", "", time.Time{}, time.Time{}, before.Version+1
	assert.Equal(t, want, got, "unlinked, the rest kept, its version moved")
	linked, err := s.FindInstallationsByTeam(ctx, "ops")
	require.NoError(t, err)
	assert.Empty(t, linked)
	dev, err := s.FindInstallationsByTeam(ctx, "dev")
	require.NoError(t, err)
	require.Len(t, dev, 1)
	assert.Equal(t, "dev", dev[0].Team)

	// A link made again writes on the version the unlinking moved to.
	relinked, err := s.UpdateInstallation(ctx, 2, link("dev"))
	require.NoError(t, err)
	assert.EqualValues(t, 3, relinked.Version)
}

func codehostDeliveries(t *testing.T, all Stores) {
	s := all.CodeHost
	ctx := context.Background()
	_, found, err := s.FindDelivery(ctx, "d1")
	require.NoError(t, err)
	assert.False(t, found)

	d := domain.Delivery{ID: "d1", Event: "push", Installation: 7, Received: at,
		Runs:    []domain.DeliveryRun{{Team: "ops", Workflow: "build", Key: domain.RunKey("d1", "build")}},
		Refused: []domain.Refusal{{Team: "ops", Workflow: "ship", Status: 400, Reason: "WORKFLOWRUN_TRIGGER_DISABLED", Message: "off"}}}
	require.NoError(t, s.CreateDelivery(ctx, d))
	got, found, err := s.FindDelivery(ctx, "d1")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, d, got)

	again := domain.Delivery{ID: "d1", Event: "push", Received: at.Add(time.Hour)}
	assert.ErrorIs(t, s.CreateDelivery(ctx, again), domain.ErrDeliveryExists, "a replay within the day")
	late := domain.Delivery{ID: "d1", Event: "ping", Received: at.Add(domain.DeliveryTTL + time.Hour)}
	require.NoError(t, s.CreateDelivery(ctx, late), "a day later the id is free again")
	got, _, err = s.FindDelivery(ctx, "d1")
	require.NoError(t, err)
	assert.Equal(t, late, got)

	require.NoError(t, s.CreateDelivery(ctx, domain.Delivery{ID: "d2", Event: "push", Received: at}))
	require.NoError(t, s.PurgeDeliveries(ctx, at.Add(time.Hour)))
	_, found, err = s.FindDelivery(ctx, "d2")
	require.NoError(t, err)
	assert.False(t, found, "purged")
	_, found, err = s.FindDelivery(ctx, "d1")
	require.NoError(t, err)
	assert.True(t, found, "kept")
}
