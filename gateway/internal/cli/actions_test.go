package cli_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/cli/config"
	"github.com/baton-flow/baton/libs/client"
	"github.com/baton-flow/baton/libs/golden"
)

const approvalFlow = `{"name":"ship","tasks":[{"name":"start","type":"start"},
  {"name":"approve","type":"approval","params":[{"name":"approverGroupRef","value":"leads"},{"name":"numberOfApprovers","value":2},
    {"name":"instructions","value":"Check staging first."}],"dependencies":[{"taskRef":"start"}]},
  {"name":"end","type":"end","dependencies":[{"taskRef":"approve","executionCondition":"success"}]}]}`

const formFlow = `{"name":"change","tasks":[{"name":"start","type":"start"},
  {"name":"ticket","type":"manual","params":[{"name":"instructions","value":"Give the change ticket."},
    {"name":"params","value":[{"name":"ticket","type":"text","required":true}]}],"dependencies":[{"taskRef":"start"}]},
  {"name":"record","type":"setwfproperty","params":[{"name":"output","value":"ticket"},{"name":"value","value":"$(tasks.ticket.results.ticket)"}],"dependencies":[{"taskRef":"ticket"}]},
  {"name":"end","type":"end","dependencies":[{"taskRef":"record","executionCondition":"success"}]}]}`

// TestActionsAgainstAServer: a run waiting at an approval or a manual form is watched
// while its team's people answer it with the action commands; the watch says whom the
// approval waits for and ends with the run's outcome.
func TestActionsAgainstAServer(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	ctx := context.Background()
	admin, err := client.New(srv.url, client.WithToken(srv.token))
	require.NoError(t, err)
	_, err = admin.CreateTeam(ctx, &client.TeamRequest{Name: "rel", Members: []client.TeamMemberRequest{
		{Email: "ann@example.com", Role: "editor"}, {Email: "bob@example.com", Role: "editor"}}})
	require.NoError(t, err)
	_, err = admin.UpdateTeam(ctx, "rel", &client.TeamRequest{ApproverGroups: []client.ApproverGroupRequest{
		{Name: "leads", Approvers: []string{"ann@example.com", "bob@example.com"}}}})
	require.NoError(t, err)
	createWorkflow(t, admin, "rel", approvalFlow)
	createWorkflow(t, admin, "rel", formFlow)

	// Each person logs in with a user token of theirs, in a config file of their own.
	cfgs := map[string]string{}
	for u, err := range admin.Users(ctx, client.UserQuery{}) {
		require.NoError(t, err)
		name, _, _ := strings.Cut(u.Email, "@")
		if name != "ann" && name != "bob" {
			continue
		}
		tok, err := admin.CreateToken(ctx, &client.TokenCreateRequest{Type: "user", Name: name, Principal: u.ID})
		require.NoError(t, err)
		cfgs[name] = t.TempDir() + "/config.yaml"
		code, out, errOut := baton(t, cfgs[name], nil, "login", "--server", srv.url, "--token", tok.Token, "--team", "rel")
		require.Equal(t, 0, code, errOut)
		assert.Contains(t, out, "as "+u.Email)
	}
	require.Len(t, cfgs, 2)
	as := func(name string, args ...string) (int, string, string) {
		return baton(t, cfgs[name], nil, args...)
	}
	// watched submits workflow with --watch, and answers its exit code and output once it ends.
	type watched struct {
		code      int
		out, errs string
	}
	watchRun := func(workflow string) <-chan watched {
		done := make(chan watched, 1)
		go func() {
			code, out, errOut := as("ann", "run", "submit", workflow, "--watch")
			done <- watched{code, out, errOut}
		}()
		return done
	}
	// openAction is the id of the one action waiting, once there is one.
	openAction := func() string {
		var id string
		require.Eventually(t, func() bool {
			code, out, _ := as("ann", "action", "list", "-o", "json")
			var actions []client.Action
			if code != 0 || json.Unmarshal([]byte(out), &actions) != nil || len(actions) != 1 {
				return false
			}
			id = actions[0].ID
			return true
		}, time.Minute, 50*time.Millisecond)
		return id
	}
	n := normalizer{}

	// Two leads approve: the run succeeds.
	done := watchRun("ship")
	id := openAction()
	n.replacer = strings.NewReplacer(id, "<ACTION>")
	code, out, errOut := as("ann", "action", "list")
	require.Equal(t, 0, code, errOut)
	golden.MatchText(t, "action-list", []byte(n.apply(out)))
	code, out, errOut = as("ann", "action", "approve", id, "-m", "looks good")
	require.Equal(t, 0, code, errOut)
	golden.MatchText(t, "action-approve-first", []byte(n.apply(out)))
	code, out, errOut = as("bob", "action", "approve", id)
	require.Equal(t, 0, code, errOut)
	golden.MatchText(t, "action-approve-second", []byte(n.apply(out)))
	w := <-done
	assert.Equal(t, 0, w.code, w.errs)
	assert.Contains(t, w.out, "task approve waiting for approval by ann@example.com, bob@example.com (2 approvals needed)\n")
	assert.Contains(t, w.out, "run succeeded")

	// A token is no person: the API refuses its vote, and the command says so. Then one
	// lead rejects: the run fails, and the watch exits 3.
	done = watchRun("ship")
	id = openAction()
	n.replacer = strings.NewReplacer(id, "<ACTION>")
	code, out, errOut = baton(t, t.TempDir()+"/c.yaml", map[string]string{config.EnvServer: srv.url, config.EnvToken: srv.token, config.EnvTeam: "rel"},
		"action", "approve", id)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, errOut, "403")
	code, out, errOut = as("bob", "action", "reject", id, "-m", "not today")
	require.Equal(t, 0, code, errOut)
	golden.MatchText(t, "action-reject", []byte(n.apply(out)))
	w = <-done
	assert.Equal(t, 3, w.code, w.errs)
	assert.Contains(t, w.out, "run failed")

	// A manual form is completed with its fields.
	done = watchRun("change")
	id = openAction()
	n.replacer = strings.NewReplacer(id, "<ACTION>")
	code, out, errOut = as("bob", "action", "complete", id, "--set", "ticket=CHG-1234")
	require.Equal(t, 0, code, errOut)
	golden.MatchText(t, "action-complete", []byte(n.apply(out)))
	w = <-done
	assert.Equal(t, 0, w.code, w.errs)
	assert.Contains(t, w.out, "task ticket waiting for the manual form (ticket) to be completed by ann@example.com, bob@example.com: Give the change ticket.\n")
	code, out, errOut = as("ann", "run", "list", "change", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var runs []client.WorkflowRun
	require.NoError(t, json.Unmarshal([]byte(out), &runs))
	require.Len(t, runs, 1)
	assert.Equal(t, []client.NameValue{{Name: "ticket", Value: "CHG-1234"}}, runs[0].Results, "the form's value reached the run")
}
