// Package storetest is the contract every store of the tasks service keeps, as one suite
// of tests run against each implementation (the Mongo store on the embedded MongoDB-wire
// server, and the SQLite one): what the use cases rely on, whatever keeps the catalogue.
package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/tasks/internal/app"
	"github.com/baton-flow/baton/services/tasks/internal/domain"
	"github.com/baton-flow/baton/services/tasks/internal/taskjson"
)

// NewStore returns an empty store, of one implementation, for one test.
type NewStore func(t *testing.T) app.TaskStore

// Run runs the whole contract against the stores newStore makes.
func Run(t *testing.T, newStore NewStore) {
	tests := []struct {
		name string
		test func(t *testing.T, s app.TaskStore)
	}{
		{"tasks are created once by scope and name and read back whole", createAndFind},
		{"a new version keeps the one before readable, a replacement changes the latest in place", versions},
		{"a change is written on the revision it was read at, fn applied anew after a lost race", updateIsConditional},
		{"concurrent new versions are all kept, in sequence", concurrentVersions},
		{"a deleted task takes its versions along, and a new task of its name starts afresh", deleteTask},
		{"searches filter by scope, team, name, status and labels, sort by creation both ways and page with exact totals", searches},
		{"a team's tasks created before a time are deleted, no other", deleteTeamTasks},
		{"password parameters read back opened", secretParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.test(t, newStore(t))
		})
	}
}

// at is a time the stores keep exactly: UTC, to the millisecond.
var at = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// newTask is version 1 of a task with most fields set.
func newTask(ref domain.Ref, created time.Time) domain.Task {
	return domain.Task{
		Name: ref.Name, DisplayName: "Task " + ref.Name, Description: "does " + ref.Name, Type: "template",
		Version: 1, Status: domain.StatusActive, Scope: ref.Scope, Team: ref.Team, CreationDate: created,
		Category: "build", Icon: "hammer", Labels: map[string]string{"baton.io/kind": "build", "tier": "1"},
		Annotations: map[string]json.RawMessage{"a.b$c": json.RawMessage(`{"x":1.50}`)},
		Changelog:   domain.Changelog{Author: "ada", Reason: "first", Date: created},
		Spec: domain.Spec{Image: "alpine:3", Script: "echo hi", Params: []domain.Param{
			{Name: "region", Type: "text", Default: json.RawMessage(`"eu"`)},
		}},
		Extra: map[string]json.RawMessage{"designer": json.RawMessage(`{"x":10,"y":20}`)},
	}
}

// stored is t as a store gives it back: through its JSON form.
func stored(t *testing.T, task domain.Task) domain.Task {
	t.Helper()
	raw, err := taskjson.Encode(task)
	require.NoError(t, err)
	out, err := taskjson.DecodeStored(raw)
	require.NoError(t, err)
	return out
}

func createAndFind(t *testing.T, s app.TaskStore) {
	ctx := context.Background()
	global := newTask(domain.GlobalRef("build"), at)
	team := newTask(domain.TeamRef("alpha", "build"), at)
	require.NoError(t, s.CreateTask(ctx, global))
	require.NoError(t, s.CreateTask(ctx, team), "a team task may share a global task's name")
	require.NoError(t, s.CreateTask(ctx, newTask(domain.TeamRef("bravo", "build"), at)), "and another team's")

	got, err := s.FindTask(ctx, global.Ref())
	require.NoError(t, err)
	assert.Equal(t, stored(t, global), got)
	got, err = s.FindTask(ctx, team.Ref())
	require.NoError(t, err)
	assert.Equal(t, stored(t, team), got)
	got, err = s.FindTaskVersion(ctx, team.Ref(), 1)
	require.NoError(t, err)
	assert.Equal(t, stored(t, team), got)

	assert.ErrorIs(t, s.CreateTask(ctx, newTask(domain.TeamRef("alpha", "build"), at)), domain.ErrTaskAlreadyExists)
	_, err = s.FindTask(ctx, domain.TeamRef("charlie", "build"))
	assert.ErrorIs(t, err, domain.ErrTaskNotFound)
	_, err = s.FindHistory(ctx, domain.GlobalRef("deploy"))
	assert.ErrorIs(t, err, domain.ErrTaskNotFound)
}

// addVersion writes version latest+1 of ref, changed by change.
func addVersion(ctx context.Context, s app.TaskStore, ref domain.Ref, author string, change func(*domain.Task)) (domain.Task, error) {
	return s.UpdateTask(ctx, ref, func(latest domain.Task) (domain.Task, error) {
		latest.Version++
		latest.Changelog = domain.Changelog{Author: author, Reason: "v" + fmt.Sprint(latest.Version), Date: at.Add(time.Duration(latest.Version) * time.Hour)}
		if change != nil {
			change(&latest)
		}
		return latest, nil
	})
}

func versions(t *testing.T, s app.TaskStore) {
	ctx := context.Background()
	ref := domain.TeamRef("alpha", "build")
	v1 := newTask(ref, at)
	require.NoError(t, s.CreateTask(ctx, v1))
	v2, err := addVersion(ctx, s, ref, "bob", func(t *domain.Task) { t.Spec.Script = "echo two" })
	require.NoError(t, err)
	assert.Equal(t, 2, v2.Version)

	// Version 2 replaced in place: the latest changes, version 1 stays.
	v2b, err := s.UpdateTask(ctx, ref, func(latest domain.Task) (domain.Task, error) {
		latest.Status = domain.StatusInactive
		latest.Labels = map[string]string{"tier": "2"}
		latest.Changelog.Reason = "fixed"
		return latest, nil
	})
	require.NoError(t, err)

	got, err := s.FindTask(ctx, ref)
	require.NoError(t, err)
	assert.Equal(t, stored(t, v2b), got)
	assert.Equal(t, "echo two", got.Spec.Script)
	old, err := s.FindTaskVersion(ctx, ref, 1)
	require.NoError(t, err)
	assert.Equal(t, stored(t, v1), old)
	for _, v := range []int{0, 3, -1} {
		_, err = s.FindTaskVersion(ctx, ref, v)
		assert.ErrorIs(t, err, domain.ErrTaskNotFound, "version %d", v)
	}

	history, err := s.FindHistory(ctx, ref)
	require.NoError(t, err)
	assert.Equal(t, []domain.VersionChange{
		{Version: 1, Changelog: domain.Changelog{Author: "ada", Reason: "first", Date: at}},
		{Version: 2, Changelog: domain.Changelog{Author: "bob", Reason: "fixed", Date: at.Add(2 * time.Hour)}},
	}, history)

	// The search sees the latest's status and labels.
	found, total, err := s.FindTasks(ctx, domain.Filter{Scope: domain.ScopeTeam, Teams: []string{"alpha"},
		Statuses: []domain.Status{domain.StatusInactive}, Labels: map[string]string{"tier": "2"}}, page.Request{Size: 10})
	require.NoError(t, err)
	assert.EqualValues(t, 1, total)
	require.Len(t, found, 1)
	assert.Equal(t, 2, found[0].Version)

	_, err = s.UpdateTask(ctx, ref, func(latest domain.Task) (domain.Task, error) {
		latest.Version += 2
		return latest, nil
	})
	assert.Error(t, err, "a version that neither adds nor replaces is refused")
	_, err = s.UpdateTask(ctx, domain.TeamRef("alpha", "nothing"), func(latest domain.Task) (domain.Task, error) { return latest, nil })
	assert.ErrorIs(t, err, domain.ErrTaskNotFound)
	boom := apperr.New(apperr.RequestInvalid, "no")
	_, err = s.UpdateTask(ctx, ref, func(domain.Task) (domain.Task, error) { return domain.Task{}, boom })
	assert.ErrorIs(t, err, boom)
}

func updateIsConditional(t *testing.T, s app.TaskStore) {
	ctx := context.Background()
	ref := domain.GlobalRef("build")
	require.NoError(t, s.CreateTask(ctx, newTask(ref, at)))
	calls := 0
	got, err := s.UpdateTask(ctx, ref, func(latest domain.Task) (domain.Task, error) {
		calls++
		if calls == 1 {
			// Someone else adds a version between this read and its write.
			_, err := addVersion(ctx, s, ref, "eve", nil)
			require.NoError(t, err)
		}
		latest.Version++
		latest.Changelog = domain.Changelog{Author: "ada", Date: at}
		return latest, nil
	})
	require.NoError(t, err)
	assert.Equal(t, 2, calls, "fn is applied anew to what the other writer left")
	assert.Equal(t, 3, got.Version)
	history, err := s.FindHistory(ctx, ref)
	require.NoError(t, err)
	require.Len(t, history, 3)
	assert.Equal(t, "eve", history[1].Author)
	v2, err := s.FindTaskVersion(ctx, ref, 2)
	require.NoError(t, err)
	assert.Equal(t, "eve", v2.Changelog.Author)
}

func concurrentVersions(t *testing.T, s app.TaskStore) {
	ctx := context.Background()
	ref := domain.TeamRef("alpha", "build")
	require.NoError(t, s.CreateTask(ctx, newTask(ref, at)))
	const writers = 4
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Go(func() {
			_, errs[i] = addVersion(ctx, s, ref, fmt.Sprintf("w%d", i), nil)
		})
	}
	wg.Wait()
	kept := 0
	for _, err := range errs {
		if err != nil {
			assert.True(t, apperr.HasReason(err, apperr.ConcurrentModification), "%v", err)
			continue
		}
		kept++
	}
	history, err := s.FindHistory(ctx, ref)
	require.NoError(t, err)
	require.Len(t, history, 1+kept)
	for i, c := range history {
		assert.Equal(t, i+1, c.Version)
		v, err := s.FindTaskVersion(ctx, ref, c.Version)
		require.NoError(t, err, "version %d", c.Version)
		assert.Equal(t, c.Author, v.Changelog.Author)
	}
}

func deleteTask(t *testing.T, s app.TaskStore) {
	ctx := context.Background()
	ref := domain.TeamRef("alpha", "build")
	require.NoError(t, s.CreateTask(ctx, newTask(ref, at)))
	_, err := addVersion(ctx, s, ref, "bob", func(t *domain.Task) { t.Spec.Script = "old two" })
	require.NoError(t, err)
	_, err = addVersion(ctx, s, ref, "bob", nil)
	require.NoError(t, err)
	require.NoError(t, s.DeleteTask(ctx, ref))
	_, err = s.FindTask(ctx, ref)
	assert.ErrorIs(t, err, domain.ErrTaskNotFound)
	assert.ErrorIs(t, s.DeleteTask(ctx, ref), domain.ErrTaskNotFound)

	again := newTask(ref, at.Add(time.Hour))
	require.NoError(t, s.CreateTask(ctx, again))
	_, err = s.FindTaskVersion(ctx, ref, 2)
	assert.ErrorIs(t, err, domain.ErrTaskNotFound)
	_, err = addVersion(ctx, s, ref, "carol", func(t *domain.Task) { t.Spec.Script = "new two" })
	require.NoError(t, err)
	_, err = addVersion(ctx, s, ref, "carol", nil)
	require.NoError(t, err)
	v2, err := s.FindTaskVersion(ctx, ref, 2)
	require.NoError(t, err)
	assert.Equal(t, "new two", v2.Spec.Script, "no version of the deleted task passes for the new one's")
	history, err := s.FindHistory(ctx, ref)
	require.NoError(t, err)
	assert.Len(t, history, 3)
}

func searches(t *testing.T, s app.TaskStore) {
	ctx := context.Background()
	for i, ref := range []domain.Ref{
		domain.TeamRef("alpha", "d"), domain.TeamRef("alpha", "a"), domain.TeamRef("bravo", "c"),
		domain.TeamRef("alpha", "b"), domain.GlobalRef("g1"), domain.GlobalRef("g2"), domain.TeamRef("charlie", "e"),
	} {
		task := newTask(ref, at.Add(time.Duration(i)*time.Minute))
		if i%2 == 1 {
			task.Status = domain.StatusInactive
			task.Labels = map[string]string{"tier": "2"}
		}
		require.NoError(t, s.CreateTask(ctx, task))
	}
	names := func(tasks []domain.Task) []string {
		out := []string{}
		for _, t := range tasks {
			out = append(out, t.Name)
		}
		return out
	}
	teams := []string{"alpha", "bravo"}
	tests := []struct {
		name  string
		f     domain.Filter
		p     page.Request
		want  []string
		total int64
	}{
		{"global", domain.Filter{Scope: domain.ScopeGlobal}, page.Request{Size: 10}, []string{"g1", "g2"}, 2},
		{"teams, oldest first", domain.Filter{Scope: domain.ScopeTeam, Teams: teams}, page.Request{Size: 10}, []string{"d", "a", "c", "b"}, 4},
		{"teams, newest first, paged", domain.Filter{Scope: domain.ScopeTeam, Teams: teams}, page.Request{Number: 1, Size: 3, Desc: true}, []string{"d"}, 4},
		{"one team", domain.Filter{Scope: domain.ScopeTeam, Teams: []string{"bravo"}}, page.Request{Size: 10}, []string{"c"}, 1},
		{"no team", domain.Filter{Scope: domain.ScopeTeam, Teams: []string{}}, page.Request{Size: 10}, []string{}, 0},
		{"names", domain.Filter{Scope: domain.ScopeTeam, Teams: teams, Names: []string{"b", "c", "e"}}, page.Request{Size: 10}, []string{"c", "b"}, 2},
		{"status", domain.Filter{Scope: domain.ScopeTeam, Teams: teams, Statuses: []domain.Status{domain.StatusInactive}}, page.Request{Size: 10}, []string{"a", "b"}, 2},
		{"labels, all of them", domain.Filter{Scope: domain.ScopeTeam, Teams: teams, Labels: map[string]string{"baton.io/kind": "build", "tier": "1"}}, page.Request{Size: 10}, []string{"d", "c"}, 2},
		{"labels, one absent", domain.Filter{Scope: domain.ScopeGlobal, Labels: map[string]string{"tier": "1", "x": "y"}}, page.Request{Size: 10}, []string{}, 0},
	}
	for _, tt := range tests {
		got, total, err := s.FindTasks(ctx, tt.f, tt.p)
		require.NoError(t, err, tt.name)
		assert.Equal(t, tt.want, names(got), tt.name)
		assert.Equal(t, tt.total, total, tt.name)
	}
}

func deleteTeamTasks(t *testing.T, s app.TaskStore) {
	ctx := context.Background()
	for i, ref := range []domain.Ref{
		domain.TeamRef("alpha", "old"), domain.TeamRef("alpha", "older"), domain.TeamRef("alpha", "new"),
		domain.TeamRef("bravo", "old"), domain.GlobalRef("old"),
	} {
		created := at.Add(-time.Duration(i+1) * time.Minute)
		if ref.Name == "new" {
			created = at.Add(time.Minute)
		}
		require.NoError(t, s.CreateTask(ctx, newTask(ref, created)))
	}
	_, err := addVersion(ctx, s, domain.TeamRef("alpha", "old"), "bob", nil)
	require.NoError(t, err)
	n, err := s.DeleteTeamTasks(ctx, "alpha", at)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	for _, ref := range []domain.Ref{domain.TeamRef("alpha", "old"), domain.TeamRef("alpha", "older")} {
		_, err := s.FindTask(ctx, ref)
		assert.ErrorIs(t, err, domain.ErrTaskNotFound, ref.String())
	}
	for _, ref := range []domain.Ref{domain.TeamRef("alpha", "new"), domain.TeamRef("bravo", "old"), domain.GlobalRef("old")} {
		_, err := s.FindTask(ctx, ref)
		assert.NoError(t, err, ref.String())
	}
	// A task made again under a deleted one's name has none of its versions.
	require.NoError(t, s.CreateTask(ctx, newTask(domain.TeamRef("alpha", "old"), at.Add(time.Hour))))
	_, err = s.FindTaskVersion(ctx, domain.TeamRef("alpha", "old"), 2)
	assert.ErrorIs(t, err, domain.ErrTaskNotFound)
}

func secretParams(t *testing.T, s app.TaskStore) {
	ctx := context.Background()
	ref := domain.GlobalRef("deploy")
	task := newTask(ref, at)
	task.Spec.Params = append(task.Spec.Params, domain.Param{Name: "key", Type: "password",
		Default: json.RawMessage(`"d3fault-pw"`), Value: json.RawMessage(`{"k":"v4lue-pw"}`)})
	require.NoError(t, s.CreateTask(ctx, task))
	_, err := addVersion(ctx, s, ref, "bob", nil)
	require.NoError(t, err)
	for _, v := range []int{1, 2} {
		got, err := s.FindTaskVersion(ctx, ref, v)
		require.NoError(t, err)
		require.Len(t, got.Spec.Params, 2)
		assert.JSONEq(t, `"d3fault-pw"`, string(got.Spec.Params[1].Default), "version %d", v)
		assert.JSONEq(t, `{"k":"v4lue-pw"}`, string(got.Spec.Params[1].Value), "version %d", v)
	}
}
