package domain

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/tasktype"
)

// A manual form's password value is one of the run's secrets from the moment the form is
// decided, as its password params are: a later task's status message and a later action's
// instructions show it masked, and a state loaded again from the stored task runs knows
// it as well.
func TestFormPasswordIsASecretOfTheRun(t *testing.T) {
	t.Parallel()
	const pw = "f0rm-Secret-value"
	form := []any{map[string]any{"name": "user", "type": "text"}, map[string]any{"name": "pw", "type": "password"}}
	s, _ := started(t, &Definition{Tasks: []TaskDef{
		task("start", tasktype.Start, nil),
		task("form", tasktype.Manual, map[string]any{"params": form}, "start"),
		task("ask", tasktype.Manual, map[string]any{"instructions": "Sign in as $(tasks.form.results.user) with $(tasks.form.results.pw)."}, "form"),
		task("bad", tasktype.SetWFStatus, map[string]any{"status": "$(tasks.form.results.pw)"}, "form"),
		task("end", tasktype.End, nil, "ask", "bad"),
	}}, nil)
	s.Run.Context.Secrets = []string{"t3am-secret"}
	require.Equal(t, []string{"t3am-secret"}, s.SecretValues(), "before the form is decided")

	m := NewMachine(s, t0)
	require.True(t, m.ActionDecided(1, 1, ActionApproved, "", map[string]string{"user": "ann", "pw": pw}, []string{"pw"}))
	assert.Equal(t, []string{"t3am-secret", pw}, s.SecretValues())
	assert.Equal(t, []string{"t3am-secret"}, s.Run.Context.Secrets, "the run's own list is left as it was")

	bad := s.Tasks[3]
	require.Equal(t, Invalid, bad.Status)
	assert.NotContains(t, bad.StatusMessage, pw)
	assert.Contains(t, bad.StatusMessage, `"********"`)

	require.Equal(t, Waiting, s.Tasks[2].Status)
	a, err := s.NewAction(2, t0)
	require.NoError(t, err)
	assert.Equal(t, "Sign in as ann with ********.", a.Instructions)

	again, err := NewState(s.Run, s.Tasks)
	require.NoError(t, err)
	assert.Equal(t, s.SecretValues(), again.SecretValues(), "a state loaded again")
}

// A result that holds a secret the run knows of is secret though whoever made it did not
// say so: a worker's, a callback's data.
func TestResultsHoldingASecretAreSecret(t *testing.T) {
	t.Parallel()
	const known = "t3am-secret"
	s, _ := started(t, &Definition{Tasks: []TaskDef{
		task("start", tasktype.Start, nil),
		task("work", tasktype.Generic, map[string]any{"queue": "q"}, "start"),
		task("wait", tasktype.EventWait, map[string]any{"topic": "deployed"}, "start"),
		task("end", tasktype.End, nil, "work", "wait"),
	}}, nil)
	s.Run.Context.Secrets = []string{known}
	m := NewMachine(s, t0)
	require.True(t, m.Ended(1, 1, Succeeded, "", map[string]string{"out": "key=" + known, "plain": "ok", "said": "x"}, []string{"said"}))
	assert.Equal(t, []string{"out", "said"}, s.Tasks[1].SecretResults)
	require.NoError(t, m.CallbackArrived("deployed", Succeeded, `{"token":"`+known+`"}`))
	assert.Equal(t, []string{"data"}, s.Tasks[2].SecretResults)
	assert.Contains(t, s.SecretValues(), "key="+known, "and is masked downstream as a whole")
}

// A manual task's form that gives a password field a default is secret as a whole in the
// task run, while its action keeps the default to fill the field with.
func TestFormWithAPasswordDefaultIsSecret(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		form any
		want []string
	}{
		{"a password default", []any{map[string]any{"name": "pw", "type": "password", "default": "d3fault-pw"}}, []string{"params"}},
		{"a password without one", []any{map[string]any{"name": "pw", "type": "password"}}, nil},
		{"a text default", []any{map[string]any{"name": "who", "type": "text", "default": "ann"}}, nil},
		{"as JSON text", `[{"name":"pw","type":"password","value":"d3fault-pw"}]`, []string{"params"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _ := gated(t, tasktype.Manual, map[string]any{"params": tt.form})
			require.Equal(t, Waiting, s.Tasks[1].Status, s.Tasks[1].StatusMessage)
			assert.Equal(t, tt.want, s.Tasks[1].SecretParams)
			a, err := s.NewAction(1, t0)
			require.NoError(t, err)
			if tt.want != nil {
				assert.Contains(t, string(a.Form[0].Value)+string(a.Form[0].Default), "d3fault-pw", "the action fills the field with it")
			}
		})
	}
}
