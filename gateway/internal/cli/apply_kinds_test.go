package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/client"
	"github.com/baton-flow/baton/libs/golden"
)

const applyTask = `kind: Task
name: greet
description: Says hello.
spec:
  image: alpine:3
  script: echo hello $(params.who)
  params:
    - name: who
      type: text
      default: world
`

const applyGlobalTask = `{"kind": "GlobalTask", "name": "notify", "description": "Posts a message.",
 "spec": {"image": "curlimages/curl:8", "command": ["curl"], "arguments": ["-d", "$(params.text)", "$(params.url)"],
  "params": [{"name": "url", "type": "text", "required": true}, {"name": "text", "type": "text"}]}}`

const applySchedule = `kind: Schedule
name: nightly
description: Ships to staging every night.
workflowRef: release
type: cron
cronSchedule: "0 2 * * *"
timezone: Europe/Paris
catchupWindow: 90m
params:
  - name: env
    value: staging
`

// apply makes tasks (a team's and the global catalogue's) and schedules what files say:
// created, unchanged when applied again (no version; the same schedule), a dry run
// printing the change and saving nothing, the change saved, and refusals named.
// applyFixture is a server with team infra, a directory for files and a configuration
// for the command.
type applyFixture struct {
	t     *testing.T
	srv   *server
	admin *client.Client
	dir   string
	cfg   string
	n     *strings.Replacer
}

func newApplyFixture(t *testing.T) *applyFixture {
	t.Helper()
	srv := startServer(t)
	admin, err := client.New(srv.url, client.WithToken(srv.token))
	require.NoError(t, err)
	_, err = admin.CreateTeam(context.Background(), &client.TeamRequest{Name: "infra"})
	require.NoError(t, err)
	cfgDir, dir := t.TempDir(), t.TempDir()
	// Only what changes between runs is replaced: a diff's indentation is its meaning.
	n := strings.NewReplacer(srv.url, "<SERVER>", srv.token, "<TOKEN>", dir, "<DIR>", cfgDir, "<CONFIG DIR>")
	return &applyFixture{t: t, srv: srv, admin: admin, dir: dir, cfg: cfgDir + "/baton/config.yaml", n: n}
}

var traceID = regexp.MustCompile(`\(trace [0-9a-f]+\)`)

// check runs the command and matches its output, ids (when given) replacing what the
// server made up, with the golden file name.
func (f *applyFixture) check(name string, wantCode int, ids *strings.Replacer, args ...string) {
	f.t.Helper()
	code, out, errOut := baton(f.t, f.cfg, nil, args...)
	assert.Equal(f.t, wantCode, code, "%s: exit code; stderr: %s", name, errOut)
	got := traceID.ReplaceAllString(f.n.Replace(out+errOut), "(trace <TRACE>)")
	if ids != nil {
		got = ids.Replace(got)
	}
	golden.MatchText(f.t, name, []byte(got))
}

// write writes a file of the fixture's directory.
func (f *applyFixture) write(name, content string) {
	f.t.Helper()
	require.NoError(f.t, os.WriteFile(filepath.Join(f.dir, name), []byte(content), 0o600))
}

func TestApplyTasksAndSchedulesAgainstAServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newApplyFixture(t)
	admin, dir, check, write := f.admin, f.dir, f.check, f.write
	taskVersion := func() int64 {
		t.Helper()
		got, err := admin.GetTeamTask(ctx, "infra", "greet")
		require.NoError(t, err)
		return got.Version
	}
	schedules := func() []client.WorkflowSchedule {
		t.Helper()
		page, err := admin.QuerySchedules(ctx, "infra", client.ScheduleQuery{Limit: 100})
		require.NoError(t, err)
		return page.Content
	}
	check("apply-kinds-login", 0, nil, "login", "--server", f.srv.url, "--token", f.srv.token, "--team", "infra")
	write("greet.yaml", applyTask)
	write("notify.json", applyGlobalTask)
	write("release.yaml", applyWorkflow)
	write("schedule.yaml", applySchedule)

	// A dry run of what does not exist yet shows it whole and creates nothing; the workflow
	// the schedule names is not there yet either, which the dry run says.
	check("apply-kinds-dry-run-create", 1, nil, "apply", "-f", dir, "--dry-run")
	_, err := admin.GetTeamTask(ctx, "infra", "greet")
	assert.True(t, client.IsNotFound(err), "a dry run creates no task: %v", err)
	assert.Empty(t, schedules(), "a dry run creates no schedule")

	check("apply-kinds-create", 0, nil, "apply", "-f", dir)
	check("apply-kinds-again", 0, nil, "apply", "-f", dir)
	assert.EqualValues(t, 1, taskVersion(), "applied twice, one version")
	g, err := admin.GetGlobalTask(ctx, "notify")
	require.NoError(t, err)
	assert.EqualValues(t, 1, g.Version)
	require.Len(t, schedules(), 1, "applied twice, one schedule")
	first := schedules()[0]
	assert.Equal(t, "0 2 * * *", first.CronSchedule)

	// Tasks: a change is shown by a dry run, saved by an apply.
	write("greet.yaml", strings.Replace(applyTask, "default: world", "default: team", 1))
	check("apply-task-dry-run", 0, nil, "apply", "-f", filepath.Join(dir, "greet.yaml"), "--dry-run")
	assert.EqualValues(t, 1, taskVersion(), "a dry run saves nothing")
	check("apply-task-change", 0, nil, "apply", "-f", filepath.Join(dir, "greet.yaml"))
	assert.EqualValues(t, 2, taskVersion())
	write("broken-task.yaml", "kind: Task\nname: broken\nspec:\n  image: alpine:3\n  params:\n    - {name: x, type: nope}\n")
	check("apply-task-refused", 1, nil, "apply", "-f", filepath.Join(dir, "broken-task.yaml"))

	// Schedules: the same, the stored schedule changed in place (its id kept).
	write("schedule.yaml", strings.Replace(applySchedule, `"0 2 * * *"`, `"30 3 * * 1-5"`, 1))
	check("apply-schedule-dry-run", 0, strings.NewReplacer(first.ID, "<ID>"), "apply", "-f", filepath.Join(dir, "schedule.yaml"), "--dry-run")
	require.Len(t, schedules(), 1)
	assert.Equal(t, "0 2 * * *", schedules()[0].CronSchedule, "a dry run saves nothing")
	check("apply-schedule-change", 0, nil, "apply", "-f", filepath.Join(dir, "schedule.yaml"))
	got := schedules()
	require.Len(t, got, 1)
	assert.Equal(t, first.ID, got[0].ID, "the schedule is replaced, not made again")
	assert.Equal(t, "30 3 * * 1-5", got[0].CronSchedule)
	assert.Equal(t, "Ships to staging every night.", got[0].Description)
	check("apply-schedule-again", 0, nil, "apply", "-f", filepath.Join(dir, "schedule.yaml"))

	write("bad-cron.yaml", strings.Replace(applySchedule, `"0 2 * * *"`, `"61 * * * *"`, 1))
	check("apply-schedule-bad-cron", 1, nil, "apply", "-f", filepath.Join(dir, "bad-cron.yaml"), "--dry-run")

	// Two schedules of one name: apply cannot tell which is meant, and says which they are.
	second, err := admin.CreateSchedule(ctx, "infra", &client.WorkflowSchedule{Name: "nightly", WorkflowRef: "release",
		Type: "cron", CronSchedule: "0 4 * * *", Timezone: "UTC"})
	require.NoError(t, err)
	ids := strings.NewReplacer(first.ID, "<FIRST ID>", second.ID, "<SECOND ID>")
	check("apply-schedule-two-named", 1, ids, "apply", "-f", filepath.Join(dir, "schedule.yaml"))
	assert.Len(t, schedules(), 2, "nothing written")
}
