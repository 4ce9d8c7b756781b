package standalone_test

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/contract"
	"github.com/baton-flow/baton/libs/client"
)

// sdkWorkflow is a workflow of one script task, "only", between start and end.
func sdkWorkflow(name, script string) *client.Workflow {
	return &client.Workflow{Name: name, Tasks: []client.WorkflowTask{
		{Name: "start", Type: "start"},
		{Name: "only", Type: "script", Dependencies: []client.TaskDependency{{TaskRef: "start"}},
			Params: []client.NameValue{{Name: "script", Value: script}}},
		{Name: "end", Type: "end", Dependencies: []client.TaskDependency{{TaskRef: "only"}}},
	}}
}

// TestIntegrationSDK drives the Go SDK against a standalone Baton, every exchange checked
// against the contract: its errors are typed, a search is read over several pages, a run
// is submitted and waited for, watched to its end, and its task's log followed as the
// script writes it; a person approves what a run waits for.
func TestIntegrationSDK(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0",
		"BATON_LOG_LEVEL": "error", "BATON_RATE_LIMIT": "0"})
	c, err := client.New(b.url, client.WithToken(b.token), client.WithHTTPClient(contract.Client(t, nil)),
		client.WithPollInterval(20*time.Millisecond))
	require.NoError(t, err)
	ctx := t.Context()

	_, err = c.CreateTeam(ctx, &client.TeamRequest{Name: "sdk",
		Members: []client.TeamMemberRequest{{Email: "ann@example.com", Role: "editor"}}})
	require.NoError(t, err)
	// The workflows service learns of the team through its event.
	require.Eventually(t, func() bool {
		_, _, err := c.ApplyWorkflow(ctx, "sdk", sdkWorkflow("hello", "echo first; echo second"))
		return err == nil
	}, 30*time.Second, 20*time.Millisecond)

	t.Run("errors are typed", func(t *testing.T) {
		_, err := c.GetWorkflow(ctx, "sdk", "nope")
		require.Error(t, err)
		e, ok := client.AsError(err)
		require.True(t, ok, "%v", err)
		assert.True(t, client.IsNotFound(err))
		assert.True(t, client.HasReason(err, "WORKFLOW_NOT_FOUND"), "%v", err)
		assert.Equal(t, 1207, e.Code)
		assert.NotEmpty(t, e.Message)
		assert.NotEmpty(t, e.TraceID)

		_, err = c.CreateTeam(ctx, &client.TeamRequest{Name: "!!!"})
		assert.True(t, client.IsInvalid(err), "%v", err)

		stranger, err := client.New(b.url, client.WithToken("btg_notatoken"), client.WithHTTPClient(contract.Client(t, nil)))
		require.NoError(t, err)
		_, err = stranger.GetProfile(ctx)
		assert.True(t, client.IsUnauthorized(err), "%v", err)
		assert.ErrorContains(t, err, client.LoginHint)
	})

	var waited *client.WorkflowRun
	t.Run("submit and wait", func(t *testing.T) {
		run, err := c.SubmitAndWait(ctx, "sdk", "hello", &client.WorkflowSubmitRequest{Labels: map[string]string{"via": "sdk"}})
		require.NoError(t, err)
		require.True(t, run.Succeeded(), "%+v", run)
		task, ok := run.Task("only")
		require.True(t, ok)
		assert.Equal(t, client.StatusSucceeded, task.Status)
		log, err := c.GetTaskRunLog(ctx, task.ID)
		require.NoError(t, err)
		assert.Equal(t, "first\nsecond\n", string(log))
		waited = run
	})

	t.Run("watch and follow", func(t *testing.T) {
		gate := filepath.Join(t.TempDir(), "gate")
		require.NoError(t, syscall.Mkfifo(gate, 0o600))
		_, _, err := c.ApplyWorkflow(ctx, "sdk", sdkWorkflow("gated", "echo first; read go < "+gate+"; echo second"))
		require.NoError(t, err)
		run, err := c.SubmitWorkflow(ctx, "sdk", "gated", nil, true)
		require.NoError(t, err)

		type seen struct {
			runs []*client.WorkflowRun
			err  error
		}
		watched := make(chan seen, 1)
		go func() {
			var s seen
			for r, err := range c.Watch(ctx, "sdk", run.ID) {
				if err != nil {
					s.err = err
					break
				}
				s.runs = append(s.runs, r)
			}
			watched <- s
		}()

		var task *client.TaskRun
		require.Eventually(t, func() bool {
			r, err := c.GetWorkflowRun(ctx, "sdk", run.ID)
			require.NoError(t, err)
			task, _ = r.Task("only")
			return task != nil && task.ID != ""
		}, 30*time.Second, 20*time.Millisecond)

		var lines []string
		for line, err := range c.TaskRunLogLines(ctx, task.ID, true) {
			require.NoError(t, err, "the stream ends properly with the task")
			lines = append(lines, line)
			if line == "first" {
				// The script waits at the gate until the line has come through.
				f, err := os.OpenFile(gate, os.O_WRONLY, 0)
				require.NoError(t, err)
				_, err = f.WriteString("go\n")
				require.NoError(t, err)
				require.NoError(t, f.Close())
			}
		}
		assert.Equal(t, []string{"first", "second"}, lines)

		s := within(t, watched, "the watch's end")
		require.NoError(t, s.err)
		require.NotEmpty(t, s.runs)
		last := s.runs[len(s.runs)-1]
		assert.True(t, last.Succeeded(), "%+v", last)
		assert.True(t, slices.ContainsFunc(s.runs[:len(s.runs)-1], func(r *client.WorkflowRun) bool { return !r.Ended() }),
			"the watch saw the run before its end")
	})

	t.Run("approve", func(t *testing.T) {
		// Only people decide: ann, a member, through her user token.
		var ann string
		for u, err := range c.Users(ctx, client.UserQuery{}) {
			require.NoError(t, err)
			if u.Email == "ann@example.com" {
				ann = u.ID
			}
		}
		require.NotEmpty(t, ann)
		tok, err := c.CreateToken(ctx, &client.TokenCreateRequest{Type: "user", Name: "ann", Principal: ann})
		require.NoError(t, err)
		asAnn, err := client.New(b.url, client.WithToken(tok.Token), client.WithHTTPClient(contract.Client(t, nil)),
			client.WithPollInterval(20*time.Millisecond))
		require.NoError(t, err)

		_, _, err = c.ApplyWorkflow(ctx, "sdk", &client.Workflow{Name: "gate", Tasks: []client.WorkflowTask{
			{Name: "start", Type: "start"},
			{Name: "approve", Type: "approval", Dependencies: []client.TaskDependency{{TaskRef: "start"}}},
			{Name: "end", Type: "end", Dependencies: []client.TaskDependency{{TaskRef: "approve"}}},
		}})
		require.NoError(t, err)
		run, err := c.SubmitWorkflow(ctx, "sdk", "gate", nil, true)
		require.NoError(t, err)
		for r, err := range c.Watch(ctx, "sdk", run.ID) {
			require.NoError(t, err)
			require.False(t, r.Ended(), "%+v", r)
			if r.AwaitingApproval {
				run = r
				break
			}
		}
		actions, err := asAnn.ActionsOfRun(ctx, "sdk", run)
		require.NoError(t, err)
		require.Len(t, actions, 1)
		require.Equal(t, "submitted", actions[0].Status)

		err = c.Approve(ctx, "sdk", actions[0].ID, "")
		assert.True(t, client.IsForbidden(err), "a token that is no person does not decide: %v", err)
		require.NoError(t, asAnn.Approve(ctx, "sdk", actions[0].ID, "fine"))
		err = asAnn.Reject(ctx, "sdk", actions[0].ID, "changed my mind")
		assert.True(t, client.HasReason(err, "ACTION_UNABLE_TO_ACTION"), "a closed action: %v", err)

		ended, err := c.WaitForRun(ctx, "sdk", run.ID)
		require.NoError(t, err)
		assert.True(t, ended.Succeeded(), "%+v", ended)
	})

	t.Run("paging", func(t *testing.T) {
		want := []string{waited.ID}
		for range 4 {
			run, err := c.SubmitWorkflow(ctx, "sdk", "hello", nil, false)
			require.NoError(t, err)
			want = append(want, run.ID)
		}
		q := client.RunQuery{Workflows: []string{"hello"}, Limit: 2}
		page, err := c.QueryWorkflowRuns(ctx, "sdk", q)
		require.NoError(t, err)
		require.EqualValues(t, len(want), page.TotalElements)
		require.Equal(t, 3, page.TotalPages, "more than one page")

		var got []string
		for run, err := range c.WorkflowRuns(ctx, "sdk", q) {
			require.NoError(t, err)
			got = append(got, run.ID)
		}
		assert.ElementsMatch(t, want, got, "every run once, over three pages")

		ended := 0
		for _, id := range want {
			run, err := c.WaitForRun(ctx, "sdk", id)
			require.NoError(t, err)
			if run.Succeeded() {
				ended++
			}
		}
		assert.Equal(t, len(want), ended)
	})
}
