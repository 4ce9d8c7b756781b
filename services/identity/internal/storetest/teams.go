package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/outbox"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

func intp(n int) *int { return &n }

// newTeam is a team with every field set, as the use cases store it.
func newTeam(n int, name string) domain.Team {
	return domain.Team{
		ID: id(n), Name: name, DisplayName: "Team " + name, Status: domain.TeamActive,
		Labels: map[string]string{"env": "prod", "cost.center": "42"}, ExternalRef: "ext-" + name,
		CreationDate:   at.Add(-time.Duration(n) * time.Hour),
		Members:        []domain.Member{{UserID: id(100 + n), Role: "owner"}, {UserID: id(200), Role: "member"}},
		ApproverGroups: []domain.ApproverGroup{{ID: "g1", Name: "leads", Approvers: []string{id(100 + n)}}},
		Parameters: []domain.TeamParam{
			{Name: "region", Type: "text", Default: json.RawMessage(`"eu"`), Value: json.RawMessage(`{"a":[1,2.50]}`)},
			{Name: "key", Type: domain.TeamParamPassword, Value: json.RawMessage(`"sealed:abc"`), HiddenValue: true},
		},
		QuotaOverrides: domain.TeamQuotaOverrides{MaxConcurrentRuns: intp(3)},
		Version:        1,
	}
}

func event1(t *testing.T, id, typ string) outbox.Entry {
	t.Helper()
	e := event.New()
	e.SetID(id)
	e.SetType(typ)
	e.SetSource("/baton/identity")
	e.SetTime(at)
	require.NoError(t, e.SetData(event.ApplicationJSON, map[string]string{"id": id}))
	entry, err := outbox.NewEntry("team", "key-"+id, e)
	require.NoError(t, err)
	return entry
}

func createAndFindTeams(t *testing.T, s Stores) {
	ctx := context.Background()
	team := newTeam(1, "alpha")
	require.NoError(t, s.Teams.CreateTeam(ctx, team, nil))

	got, err := s.Teams.FindTeamByName(ctx, "alpha")
	require.NoError(t, err)
	assert.Equal(t, team, got)

	err = s.Teams.CreateTeam(ctx, newTeam(2, "alpha"), nil)
	assert.ErrorIs(t, err, domain.ErrTeamNameTaken)

	_, err = s.Teams.FindTeamByName(ctx, "beta")
	assert.ErrorIs(t, err, domain.ErrTeamNotFound)

	taken, err := s.Teams.TeamNameTaken(ctx, "alpha")
	require.NoError(t, err)
	assert.True(t, taken)
	taken, err = s.Teams.TeamNameTaken(ctx, "beta")
	require.NoError(t, err)
	assert.False(t, taken)

	teamID, err := s.TokenTeams.TeamID(ctx, "alpha")
	require.NoError(t, err)
	assert.Equal(t, team.ID, teamID)
	_, err = s.TokenTeams.TeamID(ctx, "beta")
	assert.ErrorIs(t, err, domain.ErrTeamNotFound)
}

func updateTeamIsConditional(t *testing.T, s Stores) {
	ctx := context.Background()
	require.NoError(t, s.Teams.CreateTeam(ctx, newTeam(1, "alpha"), nil))

	calls := 0
	got, err := s.Teams.UpdateTeam(ctx, "alpha", func(team *domain.Team) error {
		calls++
		if calls == 1 {
			// Someone else changes the team between this read and its write.
			_, err := s.Teams.UpdateTeam(ctx, "alpha", func(other *domain.Team) error {
				other.DisplayName = "theirs"
				return nil
			})
			require.NoError(t, err)
		}
		team.Status = domain.TeamInactive
		team.Members = append(team.Members, domain.Member{UserID: id(300), Role: "member"})
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 2, calls, "fn is applied anew to what the other writer left")
	assert.Equal(t, int64(3), got.Version)
	assert.Equal(t, "theirs", got.DisplayName)

	stored, err := s.Teams.FindTeamByName(ctx, "alpha")
	require.NoError(t, err)
	assert.Equal(t, got, stored)
	assert.Equal(t, domain.TeamInactive, stored.Status)

	// The member added is found by member.
	teams, err := s.Teams.FindTeamsByMember(ctx, id(300))
	require.NoError(t, err)
	require.Len(t, teams, 1)
	assert.Equal(t, "alpha", teams[0].Name)

	// fn's error is the answer, and nothing is written.
	boom := apperr.New(apperr.RequestInvalid, "no")
	_, err = s.Teams.UpdateTeam(ctx, "alpha", func(*domain.Team) error { return boom })
	assert.ErrorIs(t, err, boom)
	_, err = s.Teams.UpdateTeam(ctx, "nobody", func(*domain.Team) error { return nil })
	assert.ErrorIs(t, err, domain.ErrTeamNotFound)
}

func concurrentTeamUpdates(t *testing.T, s Stores) {
	ctx := context.Background()
	require.NoError(t, s.Teams.CreateTeam(ctx, newTeam(1, "alpha"), nil))
	const writers = 4
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Go(func() {
			_, errs[i] = s.Teams.UpdateTeam(ctx, "alpha", func(team *domain.Team) error {
				team.Labels[fmt.Sprintf("w%d", i)] = "x"
				return nil
			})
		})
	}
	wg.Wait()
	got, err := s.Teams.FindTeamByName(ctx, "alpha")
	require.NoError(t, err)
	kept := 0
	for i, err := range errs {
		if err != nil {
			// Losing every race is the answer the caller may retry, never a lost write.
			assert.True(t, apperr.HasReason(err, apperr.ConcurrentModification), "%v", err)
			continue
		}
		kept++
		assert.Equal(t, "x", got.Labels[fmt.Sprintf("w%d", i)])
	}
	assert.Equal(t, int64(1+kept), got.Version)
}

func teamSearches(t *testing.T, s Stores) {
	ctx := context.Background()
	for i, name := range []string{"delta", "alpha", "charlie", "bravo", "echo"} {
		team := newTeam(i+1, name)
		team.CreationDate = at.Add(time.Duration(i) * time.Minute)
		if i%2 == 1 {
			team.Status = domain.TeamInactive
			team.Labels = map[string]string{"env": "dev"}
		}
		require.NoError(t, s.Teams.CreateTeam(ctx, team, nil))
	}
	names := func(teams []domain.Team) []string {
		out := []string{}
		for _, t := range teams {
			out = append(out, t.Name)
		}
		return out
	}
	tests := []struct {
		name  string
		f     domain.TeamFilter
		p     page.Request
		want  []string
		total int64
	}{
		{"all by name", domain.TeamFilter{}, page.Request{Size: 10}, []string{"alpha", "bravo", "charlie", "delta", "echo"}, 5},
		{"pages", domain.TeamFilter{}, page.Request{Number: 1, Size: 2}, []string{"charlie", "delta"}, 5},
		{"by name, descending", domain.TeamFilter{}, page.Request{Size: 2, Desc: true}, []string{"echo", "delta"}, 5},
		{"by creation", domain.TeamFilter{}, page.Request{Size: 10, Sort: "creationDate"}, []string{"delta", "alpha", "charlie", "bravo", "echo"}, 5},
		{"names", domain.TeamFilter{Names: []string{"echo", "alpha", "zulu"}}, page.Request{Size: 10}, []string{"alpha", "echo"}, 2},
		{"status", domain.TeamFilter{Statuses: []domain.TeamStatus{domain.TeamInactive}}, page.Request{Size: 10}, []string{"alpha", "bravo"}, 2},
		{"labels", domain.TeamFilter{Labels: map[string]string{"env": "prod", "cost.center": "42"}}, page.Request{Size: 10}, []string{"charlie", "delta", "echo"}, 3},
		{"label absent", domain.TeamFilter{Labels: map[string]string{"env": "qa"}}, page.Request{Size: 10}, []string{}, 0},
		{"member", domain.TeamFilter{MemberID: id(103)}, page.Request{Size: 10}, []string{"charlie"}, 1},
		{"shared member, page 2", domain.TeamFilter{MemberID: id(200)}, page.Request{Number: 1, Size: 4}, []string{"echo"}, 5},
	}
	for _, tt := range tests {
		got, total, err := s.Teams.FindTeams(ctx, tt.f, tt.p)
		require.NoError(t, err, tt.name)
		assert.Equal(t, tt.want, names(got), tt.name)
		assert.Equal(t, tt.total, total, tt.name)
	}
	mine, err := s.Teams.FindTeamsByMember(ctx, id(200))
	require.NoError(t, err)
	assert.Equal(t, []string{"alpha", "bravo", "charlie", "delta", "echo"}, names(mine))
}

func deleteTeam(t *testing.T, s Stores) {
	ctx := context.Background()
	old := newTeam(1, "alpha")
	require.NoError(t, s.Teams.CreateTeam(ctx, old, nil))
	live, err := s.TokenTeams.TeamLive(ctx, old.ID, "alpha")
	require.NoError(t, err)
	assert.True(t, live)

	var seen domain.Team
	require.NoError(t, s.Teams.DeleteTeam(ctx, "alpha", func(team domain.Team) ([]outbox.Entry, error) {
		seen = team
		return []outbox.Entry{event1(t, "deleted-1", "team.deleted")}, nil
	}))
	assert.Equal(t, old, seen, "owed is computed from the team as stored")

	_, err = s.Teams.FindTeamByName(ctx, "alpha")
	assert.ErrorIs(t, err, domain.ErrTeamNotFound)
	taken, err := s.Teams.TeamNameTaken(ctx, "alpha")
	require.NoError(t, err)
	assert.False(t, taken)
	teams, total, err := s.Teams.FindTeams(ctx, domain.TeamFilter{}, page.Request{Size: 10})
	require.NoError(t, err)
	assert.Empty(t, teams)
	assert.Zero(t, total)
	mine, err := s.Teams.FindTeamsByMember(ctx, id(101))
	require.NoError(t, err)
	assert.Empty(t, mine)
	live, err = s.TokenTeams.TeamLive(ctx, old.ID, "alpha")
	require.NoError(t, err)
	assert.False(t, live)

	// The name is free at once; the new team is another team.
	again := newTeam(2, "alpha")
	require.NoError(t, s.Teams.CreateTeam(ctx, again, nil))
	live, err = s.TokenTeams.TeamLive(ctx, old.ID, "alpha")
	require.NoError(t, err)
	assert.False(t, live, "the old team's id does not name the new team")
	live, err = s.TokenTeams.TeamLive(ctx, again.ID, "alpha")
	require.NoError(t, err)
	assert.True(t, live)
	live, err = s.TokenTeams.TeamLive(ctx, "not-an-id", "alpha")
	require.NoError(t, err)
	assert.False(t, live)

	err = s.Teams.DeleteTeam(ctx, "nobody", func(domain.Team) ([]outbox.Entry, error) { return nil, nil })
	assert.ErrorIs(t, err, domain.ErrTeamNotFound)
}

// recorder is a Publisher that keeps what it was given, and fails while failing is set.
type recorder struct {
	mu      sync.Mutex
	ids     []string
	failing bool
}

func (r *recorder) Publish(_ context.Context, topic, key string, e event.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failing {
		return fmt.Errorf("broker down")
	}
	r.ids = append(r.ids, topic+"/"+key+"/"+e.ID())
	return nil
}

func teamEvents(t *testing.T, s Stores) {
	ctx := context.Background()
	pub := &recorder{failing: true}
	relay := s.NewRelay(pub)
	require.NoError(t, s.Teams.CreateTeam(ctx, newTeam(1, "alpha"), []outbox.Entry{event1(t, "a-created", "team.created")}))
	require.NoError(t, s.Teams.CreateTeam(ctx, newTeam(2, "bravo"), []outbox.Entry{event1(t, "b-created", "team.created")}))
	require.NoError(t, s.Teams.DeleteTeam(ctx, "alpha", func(domain.Team) ([]outbox.Entry, error) {
		return []outbox.Entry{event1(t, "a-deleted", "team.deleted")}, nil
	}))

	// Nothing is lost while the broker is down.
	assert.Error(t, relay.Sweep(ctx))
	pub.failing = false
	require.NoError(t, relay.Sweep(ctx))
	require.NoError(t, relay.Sweep(ctx))
	got := pub.ids
	assert.Contains(t, got, "team/key-b-created/b-created")
	// A team's events leave in the order they were owed, each once.
	assert.Len(t, got, 3)
	ai, di := indexOf(got, "team/key-a-created/a-created"), indexOf(got, "team/key-a-deleted/a-deleted")
	require.GreaterOrEqual(t, ai, 0)
	require.GreaterOrEqual(t, di, 0)
	assert.Less(t, ai, di)

	// The deleted team is gone for good once its event left.
	taken, err := s.Teams.TeamNameTaken(ctx, "alpha")
	require.NoError(t, err)
	assert.False(t, taken)
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
