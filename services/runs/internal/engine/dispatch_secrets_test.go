package engine

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// The attempt of a script that uses a manual form's password field carries the value
// among the secrets its runner masks, beside those the run knew from its start, and
// crosses the broker sealed.
func TestDispatchCarriesTheRunsSecretsForMasking(t *testing.T) {
	t.Parallel()
	const pw = "f0rm-Secret-value"
	box, err := secrets.FromString("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	require.NoError(t, err)
	raw := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return b
	}
	after := func(name string) []domain.Dependency { return []domain.Dependency{{TaskRef: name}} }
	def := &domain.Definition{Name: "wf", Tasks: []domain.TaskDef{
		{Name: "start", Type: tasktype.Start},
		{Name: "form", Type: tasktype.Manual, Dependencies: after("start"), Params: []domain.TaskParam{
			{Name: "params", Value: raw([]any{map[string]any{"name": "pw", "type": "password"}})}}},
		{Name: "use", Type: tasktype.Script, Dependencies: after("form"), Params: []domain.TaskParam{
			{Name: "script", Value: raw("echo $(tasks.form.results.pw)")}}},
		{Name: "end", Type: tasktype.End, Dependencies: after("use")},
	}}
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	r, tasks, err := domain.NewRun("r1", def, domain.SubmitRequest{}, "manual", domain.Initiator{}, now, domain.Limits{MaxDuration: 60})
	require.NoError(t, err)
	r.Context.Secrets = []string{"t3am-secret"}
	st, err := domain.NewState(r, tasks)
	require.NoError(t, err)
	m := domain.NewMachine(st, now)
	require.NoError(t, m.Start())
	require.True(t, m.ActionDecided(1, 1, domain.ActionApproved, "", map[string]string{"pw": pw}, []string{"pw"}))
	require.Equal(t, domain.Ready, st.Tasks[2].Status, "handed to a runner")

	msg, err := dispatch(st, 2, now, box)
	require.NoError(t, err)
	assert.NotContains(t, string(msg.Event.Data()), pw, "the attempt crosses the broker sealed")
	var a events.TaskAttempt
	require.NoError(t, msg.Event.DataAs(&a))
	opened, err := a.Opened(box)
	require.NoError(t, err)
	assert.Equal(t, "echo "+pw, opened.Spec.Script, "the script gets the value")
	assert.ElementsMatch(t, []string{"t3am-secret", pw}, opened.Secrets, "and masks it")
}
