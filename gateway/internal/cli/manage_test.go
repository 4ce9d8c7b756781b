package cli_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/cli/config"
	"github.com/baton-flow/baton/libs/client"
	"github.com/baton-flow/baton/libs/golden"
)

// localTimes are fire times written in a schedule's zone: their dates change from day to
// day, their wall times and zones do not.
var (
	localTimes = regexp.MustCompile(`\d{4}-\d\d-\d\d (\d\d:\d\d [A-Z+\-0-9]+)`)
	secrets    = regexp.MustCompile(`\bbt[gtwus]_[0-9A-Za-z]+`)
	objectIDs  = regexp.MustCompile(`\b[0-9a-f]{24}\b`)
)

// cronFlow is a workflow whose schedule trigger is on: its schedules fire.
const cronFlow = `{"name":"nightly","triggers":{"schedule":{"enabled":true}},
 "params":[{"name":"who","type":"text","default":"world"}],
 "tasks":[{"name":"start","type":"start"},
  {"name":"greet","type":"script","params":[{"name":"script","value":"echo hello $(params.who)"}],"dependencies":[{"taskRef":"start"}]},
  {"name":"end","type":"end","dependencies":[{"taskRef":"greet"}]}]}`

// manageRig is a server with team infra and workflow hello, and a context logged in to it
// as the admin in infra.
type manageRig struct {
	t     *testing.T
	srv   *server
	admin *client.Client
	cfg   string
	// ids maps what changes from one run of the test to the next to its placeholder.
	ids []string
}

func newManageRig(t *testing.T) *manageRig {
	srv := startServer(t)
	admin, err := client.New(srv.url, client.WithToken(srv.token))
	require.NoError(t, err)
	_, err = admin.CreateTeam(context.Background(), &client.TeamRequest{Name: "infra"})
	require.NoError(t, err)
	createWorkflow(t, admin, "infra", helloFlow)
	createWorkflow(t, admin, "infra", cronFlow)
	r := &manageRig{t: t, srv: srv, admin: admin, cfg: t.TempDir() + "/baton/config.yaml",
		ids: []string{srv.url, "<SERVER>", srv.token, "<TOKEN>"}}
	code, _, errOut := baton(t, r.cfg, nil, "login", "--server", srv.url, "--token", srv.token, "--team", "infra")
	require.Equal(t, 0, code, errOut)
	return r
}

// name makes id read as placeholder in golden outputs.
func (r *manageRig) name(id, placeholder string) { r.ids = append(r.ids, id, placeholder) }

// check runs a command and compares what it printed with the golden file of name.
func (r *manageRig) check(name string, wantCode int, vars map[string]string, args ...string) string {
	r.t.Helper()
	code, out, errOut := baton(r.t, r.cfg, vars, args...)
	assert.Equal(r.t, wantCode, code, "%s: exit code; stderr: %s", name, errOut)
	got := strings.NewReplacer(r.ids...).Replace(out + errOut)
	got = localTimes.ReplaceAllString(got, "<DATE> $1")
	got = secrets.ReplaceAllString(got, "<SECRET>")
	got = objectIDs.ReplaceAllString(got, "<ID>")
	golden.MatchText(r.t, name, []byte(normalizer{}.apply(got)))
	return out
}

// run runs a command that must succeed and answers its stdout.
func (r *manageRig) run(vars map[string]string, args ...string) string {
	r.t.Helper()
	code, out, errOut := baton(r.t, r.cfg, vars, args...)
	require.Equal(r.t, 0, code, "%v: %s", args, errOut)
	return out
}

// TestScheduleCommands: schedules are created, listed with their next fires in their own
// zone, paused, resumed, backfilled and deleted, and refusals say why.
func TestScheduleCommands(t *testing.T) {
	t.Parallel()
	r := newManageRig(t)
	ctx := context.Background()

	// Asia/Kolkata keeps one offset all year: its wall times stay put in the goldens.
	var created client.WorkflowSchedule
	require.NoError(t, json.Unmarshal([]byte(r.run(nil, "schedule", "create", "nightly", "--cron", "30 9 * * *",
		"--timezone", "Asia/Kolkata", "-p", "who=cron", "--name", "morning", "-o", "json")), &created))
	require.NotEmpty(t, created.ID)
	r.name(created.ID, "<SCHEDULE>")
	assert.Equal(t, []client.NameValue{{Name: "who", Value: "cron"}}, created.Params, "-p becomes the schedule's params")

	out := r.check("schedule-create", 0, nil, "schedule", "create", "infra/hello", "--cron", "0 */6 * * *", "--timezone", "UTC")
	second := regexp.MustCompile(`Schedule (\S+) of`).FindStringSubmatch(out)
	require.NotNil(t, second, out)
	r.name(second[1], "<SCHEDULE 2>")

	// The list's fire times are the API's calendar, in the schedule's zone.
	cals, err := r.admin.GetScheduleCalendars(ctx, "infra", []string{created.ID}, time.Now(), time.Now().Add(72*time.Hour))
	require.NoError(t, err)
	require.Len(t, cals, 1)
	require.GreaterOrEqual(t, len(cals[0].Dates), 2)
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	require.NoError(t, err)
	out = r.check("schedule-list", 0, nil, "schedule", "list")
	assert.Contains(t, out, cals[0].Dates[0].In(kolkata).Format("2006-01-02 15:04 MST")+", "+cals[0].Dates[1].In(kolkata).Format("2006-01-02 15:04 MST"))
	r.check("schedule-list-wide", 0, nil, "schedule", "list", "-o", "wide", "--workflow", "nightly", "--status", "active")
	r.check("schedule-describe", 0, nil, "schedule", "describe", created.ID)

	// Paused, it has no next fire; resumed, it fires again.
	r.check("schedule-pause", 0, nil, "schedule", "pause", created.ID)
	r.check("schedule-pause-again", 0, nil, "schedule", "pause", created.ID)
	paused, err := r.admin.GetSchedule(ctx, "infra", created.ID)
	require.NoError(t, err)
	assert.Equal(t, "inactive", paused.Status)
	assert.Equal(t, []client.NameValue{{Name: "who", Value: "cron"}}, paused.Params, "a pause keeps the params")
	r.check("schedule-list-paused", 0, nil, "schedule", "list")
	r.check("schedule-resume", 0, nil, "schedule", "resume", created.ID)

	// A backfill of the last two days' mornings makes their two runs, once.
	from := time.Now().In(kolkata).AddDate(0, 0, -3)
	from = time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, kolkata)
	window := []string{"--from", from.Format("2006-01-02"), "--to", from.AddDate(0, 0, 2).Format("2006-01-02")}
	r.check("schedule-backfill", 0, nil, append([]string{"schedule", "backfill", created.ID}, window...)...)
	r.check("schedule-backfill-again", 0, nil, append([]string{"schedule", "backfill", created.ID}, window...)...)
	runs, err := client.Collect(r.admin.WorkflowRuns(ctx, "infra", client.RunQuery{Triggers: []string{"schedule"}, Limit: 100}))
	require.NoError(t, err)
	assert.Len(t, runs, 2, "one run per fire of the window, however often backfilled")

	// --at makes a runOnce schedule, its one fire in its zone.
	at := time.Now().In(kolkata).AddDate(0, 0, 30).Format("2006-01-02") + "T10:00"
	r.check("schedule-create-once", 0, nil, "schedule", "create", "nightly", "--at", at, "--timezone", "Asia/Kolkata")

	// Refusals say why, and where to look.
	r.check("schedule-backfill-future", 1, nil, "schedule", "backfill", created.ID, "--from", "now", "--to", time.Now().Add(48*time.Hour).UTC().Format(time.RFC3339))
	r.check("schedule-create-bad-cron", 1, nil, "schedule", "create", "hello", "--cron", "0 0 30 2 *")
	r.check("schedule-create-bad-zone", 1, nil, "schedule", "create", "hello", "--cron", "@daily", "--timezone", "Mars/Olympus")
	r.check("schedule-create-no-workflow", 1, nil, "schedule", "create", "nowhere", "--cron", "@daily")
	r.check("schedule-delete", 0, nil, "schedule", "delete", second[1])
	r.check("schedule-describe-deleted", 0, nil, "schedule", "describe", second[1])
	r.check("schedule-pause-deleted", 1, nil, "schedule", "pause", second[1])
	r.check("schedule-describe-unknown", 1, nil, "schedule", "describe", "no-such-schedule")
}

// TestTokenCommands: a created token's secret is printed once with how to use it, and
// works; a token cannot be given more rights than its creator; tokens are listed and
// revoked.
func TestTokenCommands(t *testing.T) {
	t.Parallel()
	r := newManageRig(t)
	ctx := context.Background()

	out := r.check("token-create", 0, nil, "token", "create", "--type", "team", "--name", "ci", "--permission", "**/read")
	m := regexp.MustCompile(`Token (\S+) \(ci`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	r.name(m[1], "<TOKEN ID>")
	secret := secrets.FindString(out)
	require.NotEmpty(t, secret, out)
	ci, err := client.New(r.srv.url, client.WithToken(secret))
	require.NoError(t, err)
	_, err = ci.GetWorkflow(ctx, "infra", "hello")
	require.NoError(t, err, "the printed secret is the token's")

	var answer client.TokenCreateResponse
	require.NoError(t, json.Unmarshal([]byte(r.run(nil, "token", "create", "--type", "workflow", "--principal", "hello",
		"--name", "hook", "--permission", "workflowrun/write", "--expires", "30d", "-o", "json")), &answer))
	assert.Equal(t, "workflow", answer.Type)
	assert.True(t, strings.HasPrefix(answer.Token, "btw_"), "-o json holds the secret: %+v", answer)
	assert.WithinDuration(t, time.Now().AddDate(0, 0, 30), answer.ExpirationDate, time.Hour)
	r.name(answer.ID, "<HOOK ID>")

	// A read-only token may not make tokens; one that may cannot give more rights than it holds.
	r.check("token-create-by-reader", 1, map[string]string{config.EnvToken: secret},
		"token", "create", "--type", "team", "--name", "escalate", "--permission", "**/read")
	maker, err := r.admin.CreateToken(ctx, &client.TokenCreateRequest{Type: "team", Name: "maker", Principal: "infra",
		Permissions: []string{"token/write", "workflow/read"}})
	require.NoError(t, err)
	r.name(maker.ID, "<MAKER ID>")
	r.check("token-create-more-rights", 1, map[string]string{config.EnvToken: maker.Token},
		"token", "create", "--type", "team", "--name", "escalate", "--permission", "workflowrun/write")
	r.check("token-create-no-principal", 1, nil, "token", "create", "--type", "workflow", "--name", "x")
	r.check("token-create-bad-type", 1, nil, "token", "create", "--type", "robot", "--name", "x")

	r.check("token-list", 0, nil, "token", "list", "--type", "team,workflow")
	r.check("token-revoke", 0, nil, "token", "revoke", answer.ID)
	require.Eventually(t, func() bool {
		tokens, err := client.Collect(r.admin.Tokens(ctx, client.TokenQuery{Types: []string{"workflow"}}))
		return err == nil && len(tokens) == 1 && !tokens[0].Valid
	}, 30*time.Second, 50*time.Millisecond, "the revoked token is listed as not valid")
	r.check("token-revoke-unknown", 1, nil, "token", "revoke", "no-such-token")
}

// TestTeamCommands: a team is created with members, members are added, re-roled and
// removed, approver groups set and listed, and refusals say why and what to do.
func TestTeamCommands(t *testing.T) {
	t.Parallel()
	r := newManageRig(t)

	r.check("team-create", 0, nil, "team", "create", "payments", "--member", "ana@example.com=owner", "--member", "bo@example.com=editor")
	r.check("team-create-taken", 1, nil, "team", "create", "payments")
	r.check("team-add-member", 0, nil, "team", "add-member", "payments", "cy@example.com", "--role", "reader")
	r.check("team-add-member-role", 0, nil, "team", "add-member", "payments", "cy@example.com", "--role", "editor")
	r.check("team-add-member-bad-role", 1, nil, "team", "add-member", "payments", "dee@example.com", "--role", "boss")
	r.check("team-members", 0, nil, "team", "members", "payments")

	// A user token is made for a user named by email, and acts as them.
	out := r.check("team-user-token", 0, nil, "token", "create", "--type", "user", "--principal", "bo@example.com", "--name", "bo")
	bo, err := client.New(r.srv.url, client.WithToken(secrets.FindString(out)))
	require.NoError(t, err)
	profile, err := bo.GetProfile(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "bo@example.com", profile.Email)
	r.check("team-user-token-stranger", 1, nil, "token", "create", "--type", "user", "--principal", "zed@example.com", "--name", "zed")

	r.check("team-set-approvers", 0, nil, "team", "set-approvers", "payments", "leads", "ana@example.com", "bo@example.com")
	r.check("team-set-approvers-replace", 0, nil, "team", "set-approvers", "payments", "leads", "cy@example.com")
	r.check("team-set-approvers-stranger", 1, nil, "team", "set-approvers", "payments", "leads", "zed@example.com")
	r.check("team-approvers", 0, nil, "team", "approvers", "payments")

	r.check("team-remove-member", 0, nil, "team", "remove-member", "payments", "cy@example.com")
	r.check("team-approvers-after-remove", 0, nil, "team", "approvers", "payments")
	r.check("team-remove-stranger", 1, nil, "team", "remove-member", "payments", "zed@example.com")
	r.check("team-remove-last-owner", 1, nil, "team", "remove-member", "payments", "ana@example.com")

	// A team token reads its team but cannot change who is in it.
	tok, err := r.admin.CreateToken(context.Background(), &client.TokenCreateRequest{Type: "team", Name: "bot", Principal: "payments", Permissions: []string{"**/read", "**/write"}})
	require.NoError(t, err)
	r.check("team-add-member-by-token", 1, map[string]string{config.EnvToken: tok.Token},
		"team", "add-member", "payments", "eve@example.com", "--role", "reader")
	r.check("team-members-unknown", 1, nil, "team", "members", "nowhere")
}
