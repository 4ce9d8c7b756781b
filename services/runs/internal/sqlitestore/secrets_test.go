package sqlitestore_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// storedBytes is every file of the database (the file and its write-ahead log), as text.
func storedBytes(t *testing.T, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	var b strings.Builder
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		b.Write(raw)
	}
	return b.String()
}

// What a run holds from a secret is sealed in the file, as mongostore seals it in Mongo,
// and reads back opened: its params named secret, a task run's results named secret, a
// manual task's form giving a password field a default (in the definition and the task
// run), and a manual action's secret values.
func TestSecretsAreSealedAtRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	dir := filepath.Dir(s.Path())
	const (
		formSecret   = "f0rm-default-pw"
		paramSecret  = "p4ram-secret"
		resultSecret = "r3sult-secret"
		valueSecret  = "v4lue-secret"
	)
	form := json.RawMessage(`[{"name":"user","type":"text","default":"shown"},{"name":"pw","type":"password","default":"` + formSecret + `"}]`)
	manual := domain.TaskDef{Name: "ask", Type: tasktype.Manual, Params: []domain.TaskParam{{Name: "params", Value: form}},
		Dependencies: []domain.Dependency{{TaskRef: "start"}}}
	def := &domain.Definition{Name: "w", Tasks: []domain.TaskDef{{Name: "start", Type: tasktype.Start}, manual,
		{Name: "end", Type: tasktype.End, Dependencies: []domain.Dependency{{TaskRef: "ask"}}}}}
	r, tasks, err := domain.NewRun("run-secret", def, domain.SubmitRequest{}, "manual", domain.Initiator{}, time.Now(), domain.Limits{MaxDuration: 5})
	require.NoError(t, err)
	r.Params, r.SecretParams = map[string]any{"token": paramSecret, "who": "shown"}, []string{"token"}
	var decoded any
	require.NoError(t, json.Unmarshal(form, &decoded))
	tasks[1].Params, tasks[1].SecretParams = map[string]any{"params": decoded}, []string{"params"}
	tasks[0].Results, tasks[0].SecretResults = map[string]string{"out": resultSecret}, []string{"out"}
	require.NoError(t, s.CreateRun(ctx, r, tasks))
	a := &domain.Action{ID: "run-secret.1-1", Team: "infra", Type: domain.ManualAction, Status: domain.ActionSubmitted,
		RunID: r.ID, TaskRunID: tasks[1].ID, Attempt: 1, CreationDate: time.Now().UTC(), SecretValues: []string{"pw"},
		Values: map[string]any{"pw": valueSecret, "user": "shown"}}
	require.NoError(t, s.CreateAction(ctx, a))

	stored := storedBytes(t, dir)
	require.True(t, strings.Contains(stored, `"shown"`), "the docs are read as text")
	for _, secret := range []string{formSecret, paramSecret, resultSecret, valueSecret} {
		assert.False(t, strings.Contains(stored, secret), "the file holds %s in clear", secret)
	}

	back, err := s.FindRun(ctx, r.ID)
	require.NoError(t, err)
	assert.Equal(t, r.Params, back.Params)
	back.Definition, err = s.FindDefinition(ctx, back)
	require.NoError(t, err)
	assert.Equal(t, manual, back.Definition.Tasks[1], "the form is read back opened")
	all, err := s.FindTaskRuns(ctx, back)
	require.NoError(t, err)
	assert.Equal(t, tasks[1].Params, all[1].Params)
	assert.Equal(t, tasks[0].Results, all[0].Results)
	got, err := s.FindAction(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, a.Values, got.Values)
}
