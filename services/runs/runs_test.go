package runs_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/runs"
)

const infra = "/api/v2/team/infra"

func TestSubmitInlineChain(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	def := chain("hello", prop("a", "greeting", "hello $(params.who) in $(params.region)"),
		prop("b", "shout", "$(tasks.a.results.greeting)!"), prop("c", "token", "$(global.params.token)"))
	def["params"] = []map[string]any{{"name": "who", "type": "text", "default": "world"}}
	f.defs.put("infra", def)

	res := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/hello/submit?start=true",
		map[string]any{"params": map[string]any{"who": "Baton"}, "labels": map[string]any{"env": "prod"}, "trigger": "schedule"})
	run := res.body
	assert.Equal(t, "succeeded", run["status"], run["statusMessage"])
	assert.Equal(t, "completed", run["phase"])
	assert.Equal(t, "manual", run["trigger"], "API submits are manual, whatever the body says")
	assert.Equal(t, named("greeting", "hello Baton in us-east", "shout", "hello Baton in us-east!", "token", "********"), run["results"])
	assert.Equal(t, infra+"/workflowrun/"+run["id"].(string), res.header.Get("Location"))
	tasks := run["tasks"].([]any)
	require.Len(t, tasks, 5)
	for _, task := range tasks {
		assert.Equal(t, "succeeded", task.(map[string]any)["status"])
	}
	assert.Equal(t, map[string]any{"type": "user", "id": "u-owner", "name": "Olive Owner"}, run["initiatedBy"])

	id := run["id"].(string)
	got := f.must(t, http.StatusOK, reader, http.MethodGet, infra+"/workflowrun/"+id+"?withTasks=false", nil).body
	assert.NotContains(t, got, "tasks")
	f.must(t, http.StatusNotFound, outsider, http.MethodGet, "/api/v2/team/other/workflowrun/"+id, nil)
	f.must(t, http.StatusForbidden, outsider, http.MethodGet, infra+"/workflowrun/"+id, nil)

	// Moves the table does not allow answer 409.
	for _, move := range []struct{ method, path string }{
		{http.MethodPut, "/start"}, {http.MethodDelete, "/cancel"}, {http.MethodPut, "/retry"},
	} {
		r := f.must(t, http.StatusConflict, owner, move.method, infra+"/workflowrun/"+id+move.path, nil)
		assert.Equal(t, "WORKFLOWRUN_INVALID_PHASE", r.body["reason"])
	}
	fin := f.must(t, http.StatusOK, owner, http.MethodPut, infra+"/workflowrun/"+id+"/finalize", nil).body
	assert.Equal(t, "finalized", fin["phase"])
	f.must(t, http.StatusConflict, owner, http.MethodPut, infra+"/workflowrun/"+id+"/finalize", nil)

	// Query and count see it.
	page := f.must(t, http.StatusOK, reader, http.MethodGet, infra+"/workflowrun/query?page=0&limit=10&labels=env%3Dprod&statuses=succeeded", nil).body
	assert.EqualValues(t, 1, page["totalElements"])
	page = f.must(t, http.StatusOK, reader, http.MethodGet, infra+"/workflowrun/query?page=0&limit=10&statuses=failed", nil).body
	assert.EqualValues(t, 0, page["totalElements"])
	page = f.must(t, http.StatusOK, reader, http.MethodGet, infra+"/workflowrun/query?page=0&limit=10&workflowruns="+id+"&phase=finalized", nil).body
	assert.EqualValues(t, 1, page["totalElements"])
	f.must(t, http.StatusBadRequest, reader, http.MethodGet, infra+"/workflowrun/query?statuses=bogus", nil)
	count := f.must(t, http.StatusOK, reader, http.MethodGet, infra+"/workflowrun/count", nil).body["status"].(map[string]any)
	assert.EqualValues(t, 1, count["all"])
	assert.EqualValues(t, 1, count["succeeded"])
	assert.Len(t, count, 11)
}

func TestSubmitRules(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	def := chain("needs", prop("a", "x", "$(params.must)"))
	def["params"] = []map[string]any{{"name": "must", "required": true}}
	f.defs.put("infra", def)
	off := chain("off", prop("a", "x", "1"))
	off["triggers"] = map[string]any{"manual": map[string]any{"enabled": false}}
	f.defs.put("infra", off)
	inactive := chain("idle", prop("a", "x", "1"))
	inactive["status"] = "inactive"
	f.defs.put("infra", inactive)

	tests := []struct {
		name, path string
		body       any // nil: no body
		code       int
		reason     string
	}{
		{"missing required param", "/workflow/needs/submit", nil, 400, "WORKFLOWRUN_INVALID_REQ"},
		{"unknown workflow", "/workflow/nope/submit", nil, 404, "WORKFLOW_NOT_FOUND"},
		{"unknown version", "/workflow/needs/submit", map[string]any{"workflowVersion": 7, "params": map[string]any{"must": 1}}, 404, "WORKFLOW_REVISION_NOT_FOUND"},
		{"manual trigger off", "/workflow/off/submit", nil, 400, "WORKFLOWRUN_TRIGGER_DISABLED"},
		{"inactive workflow", "/workflow/idle/submit", nil, 400, "WORKFLOW_NOT_ACTIVE"},
		{"bad start flag", "/workflow/needs/submit?start=maybe", nil, 400, "QUERY_INVALID_FILTERS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.must(t, tt.code, owner, http.MethodPost, infra+tt.path, tt.body)
			assert.Equal(t, tt.reason, r.body["reason"])
		})
	}
	f.must(t, http.StatusForbidden, reader, http.MethodPost, infra+"/workflow/needs/submit", map[string]any{"params": map[string]any{"must": 1}})

	// An idempotency key answers the first run again.
	body := map[string]any{"params": map[string]any{"must": "yes"}, "idempotencyKey": "k-1"}
	first := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/needs/submit", body).body
	again := f.must(t, http.StatusOK, owner, http.MethodPost, infra+"/workflow/needs/submit", body).body
	assert.Equal(t, first["id"], again["id"])
	// Without start, the run is accepted ready/queued and then starts on its own.
	assert.Equal(t, "ready", first["status"])
	assert.Equal(t, "queued", first["phase"])
	done := f.waitRun(t, "infra", first["id"].(string), completed)
	assert.Equal(t, "succeeded", done["status"])
	assert.Equal(t, named("x", "yes"), done["results"])
}

// Params are sent as the contract's list of {name, value} or as an object of name to
// value, and answered as the list, in name order.
func TestSubmitParamsListOrMap(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	def := chain("pair", prop("a", "x", "$(params.must)-$(params.other)"))
	def["params"] = []map[string]any{{"name": "must", "required": true}, {"name": "other", "default": "d"}}
	f.defs.put("infra", def)

	tests := []struct {
		name   string
		params any
		code   int
		want   []any  // the run's params
		field  string // the field named by a refusal
	}{
		{name: "list", params: []any{map[string]any{"name": "must", "value": "m"}, map[string]any{"name": "other", "value": 2}},
			code: 201, want: named("must", "m", "other", float64(2))},
		{name: "map", params: map[string]any{"must": "m"}, code: 201, want: named("must", "m", "other", "d")},
		{name: "empty list", params: []any{}, code: 400},
		{name: "list item without a name", params: []any{map[string]any{"value": "m"}}, code: 400, field: "params[0].name"},
		{name: "name given twice", params: []any{map[string]any{"name": "must", "value": "a"}, map[string]any{"name": "must", "value": "b"}},
			code: 400, field: "params[1].name"},
		{name: "neither list nor map", params: "must=m", code: 400, field: "params"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := f.must(t, tt.code, owner, http.MethodPost, infra+"/workflow/pair/submit", map[string]any{"params": tt.params})
			if tt.code != http.StatusCreated {
				assert.Equal(t, "WORKFLOWRUN_INVALID_REQ", r.body["reason"])
				if tt.field != "" {
					require.NotEmpty(t, r.body["errors"], r.raw)
					assert.Equal(t, tt.field, r.body["errors"].([]any)[0].(map[string]any)["field"], r.raw)
				}
				return
			}
			assert.Equal(t, tt.want, r.body["params"])
			done := f.waitRun(t, "infra", r.body["id"].(string), completed)
			assert.Equal(t, named("x", fmt.Sprintf("%v-%v", valueOf(t, tt.want, "must"), valueOf(t, tt.want, "other"))), done["results"])
			task := done["tasks"].([]any)[1].(map[string]any)
			assert.Equal(t, named("output", "x", "value", done["results"].([]any)[0].(map[string]any)["value"]), task["params"])
			assert.Equal(t, named("x", valueOf(t, done["results"], "x")), task["results"])
		})
	}
}

func TestConcurrencyAndMonthlyQuotas(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ctxs.tc["infra"] = runs.TeamContext{MaxMonthly: 3, MaxDuration: 60, MaxConcurrent: 1, TaskDefaultTimeout: 10}
	f.defs.put("infra", chain("nap", map[string]any{"name": "nap", "type": "sleep", "params": []map[string]any{{"name": "duration", "value": 600000}}}))

	first := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/nap/submit?start=true", nil).body
	assert.Equal(t, "running", first["status"])
	second := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/nap/submit?start=true", nil).body
	assert.Equal(t, "queued", second["phase"], "no slot: the run waits")
	r := f.must(t, http.StatusTooManyRequests, owner, http.MethodPut, infra+"/workflowrun/"+second["id"].(string)+"/start",
		map[string]any{"labels": map[string]any{"k": "v"}})
	assert.NotEmpty(t, r.header.Get("Retry-After"))
	f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/nap/submit", nil)
	r = f.must(t, http.StatusTooManyRequests, owner, http.MethodPost, infra+"/workflow/nap/submit", nil)
	assert.Equal(t, "QUOTA_EXCEEDED", r.body["reason"])

	cancelled := f.must(t, http.StatusOK, owner, http.MethodDelete, infra+"/workflowrun/"+first["id"].(string)+"/cancel", nil).body
	assert.Equal(t, "cancelled", cancelled["status"])
	assert.Equal(t, "cancelled", cancelled["tasks"].([]any)[1].(map[string]any)["status"])
	assert.Equal(t, "skipped", cancelled["tasks"].([]any)[2].(map[string]any)["status"])
	// The freed slot goes to the oldest queued run, with the labels its start request added.
	started := f.waitRun(t, "infra", second["id"].(string), func(run map[string]any) bool { return run["status"] == "running" })
	assert.Equal(t, map[string]any{"k": "v"}, started["labels"])
}

func TestRunnerTasksRetryAndLogs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	script := map[string]any{"name": "build", "type": "script", "retries": 1, "retryDelay": 0, "results": []string{"out"},
		"params": []map[string]any{{"name": "script", "value": "echo $(params.region) > $(results.out.path)"}}}
	f.defs.put("infra", chain("build", script, prop("after", "built", "$(tasks.build.results.out)")))
	run := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/build/submit?start=true", nil).body
	id := run["id"].(string)
	taskRun := id + ".1"
	f.must(t, http.StatusOK, reader, http.MethodGet, infra+"/workflowrun/"+id+"?withTasks=false", nil)

	dispatches := f.consume(t, events.TaskDispatch, func(e event.Event) bool { return e.ID() == taskRun+"/1" })
	dispatch := dispatches[len(dispatches)-1]
	assert.NotContains(t, string(dispatch.Data()), "s3cr3t-value", "an attempt of a run with secrets crosses the broker sealed")
	sealed, err := events.Decode[events.TaskAttempt](dispatch)
	require.NoError(t, err)
	require.NotEmpty(t, sealed.Sealed)
	assert.Empty(t, sealed.Spec.Script)
	box, err := secrets.FromString(testSecretKey)
	require.NoError(t, err)
	a, err := sealed.Opened(box)
	require.NoError(t, err)
	assert.Equal(t, "echo us-east > $(results.out.path)", a.Spec.Script)
	assert.Equal(t, []string{"out"}, a.Results)
	require.Len(t, a.Secrets, 2)
	assert.Equal(t, "s3cr3t-value", a.Secrets[0])
	assert.True(t, strings.HasPrefix(a.Secrets[1], auth.RunTokenPrefix), "the run's callback token is masked in logs too")

	claim := map[string]any{"attempt": 1, "runner": "r1"}
	f.must(t, http.StatusOK, service, http.MethodPost, "/internal/v1/taskruns/"+taskRun+"/claim", claim)
	f.must(t, http.StatusConflict, service, http.MethodPost, "/internal/v1/taskruns/"+taskRun+"/claim", map[string]any{"attempt": 1, "runner": "r2"})
	f.must(t, http.StatusForbidden, owner, http.MethodPost, "/internal/v1/taskruns/"+taskRun+"/claim", claim)
	hb := f.must(t, http.StatusOK, service, http.MethodPost, "/internal/v1/taskruns/"+taskRun+"/heartbeat", claim).body
	assert.Equal(t, false, hb["cancel"])

	f.publishUpdate(t, events.TaskUpdate{TaskRunID: taskRun, RunID: id, Attempt: 1, Kind: events.UpdateLog, Seq: 0, Log: "first try\n"})
	code := 1
	f.publishUpdate(t, events.TaskUpdate{TaskRunID: taskRun, RunID: id, Attempt: 1, Kind: events.UpdateEnded, Status: "failed", ExitCode: &code, Message: "exit code 1"})
	// The retry is attempt 2.
	f.consume(t, events.TaskDispatch, func(e event.Event) bool { return e.ID() == taskRun+"/2" })
	f.must(t, http.StatusOK, service, http.MethodPost, "/internal/v1/taskruns/"+taskRun+"/claim", map[string]any{"attempt": 2, "runner": "r1"})
	f.publishUpdate(t, events.TaskUpdate{TaskRunID: taskRun, RunID: id, Attempt: 2, Kind: events.UpdateLog, Seq: 0, Log: "second try\n"})
	f.publishUpdate(t, events.TaskUpdate{TaskRunID: taskRun, RunID: id, Attempt: 2, Kind: events.UpdateEnded, Status: "succeeded",
		Results: map[string]string{"out": "artifact-42"}})
	done := f.waitRun(t, "infra", id, completed)
	assert.Equal(t, "succeeded", done["status"], done["statusMessage"])
	assert.Equal(t, named("built", "artifact-42"), done["results"])
	build := done["tasks"].([]any)[1].(map[string]any)
	assert.EqualValues(t, 2, build["attempt"])

	log := f.must(t, http.StatusOK, reader, http.MethodGet, "/api/v2/taskrun/"+taskRun+"/log", nil)
	assert.Equal(t, "first try\nsecond try\n", string(log.raw))
	assert.Contains(t, log.header.Get("Content-Type"), "text/plain")
	empty := f.must(t, http.StatusOK, reader, http.MethodGet, "/api/v2/taskrun/"+id+".0/log", nil)
	assert.Empty(t, empty.raw)
	f.must(t, http.StatusNotFound, outsider, http.MethodGet, "/api/v2/taskrun/"+taskRun+"/log", nil)

	// Every status change went out as a CloudEvent, the run's last.
	evs := f.consume(t, events.RunEvents, func(e event.Event) bool {
		return e.Type() == events.TypeStatusWorkflowRun && e.Subject() == "/workflowrun/"+id+"/status/succeeded"
	})
	var taskStatuses []string
	for _, e := range evs {
		if e.Type() == events.TypeStatusTaskRun && e.Subject() != "" && e.ID()[:len(taskRun)] == taskRun {
			taskStatuses = append(taskStatuses, e.ID()[len(taskRun)+1:])
		}
	}
	assert.Equal(t, []string{"1/ready", "1/running", "1/waiting", "2/ready", "2/running", "2/succeeded"}, taskStatuses)
}

func TestRetryFromFailureAndChildRuns(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.defs.put("infra", chain("flaky", prop("a", "one", "1"), prop("b", "two", "$(params.gate)")))
	run := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/flaky/submit?start=true", nil).body
	assert.Equal(t, "failed", run["status"])
	assert.Contains(t, run["statusMessage"], "$(params.gate)")

	retry := f.must(t, http.StatusCreated, owner, http.MethodPut, infra+"/workflowrun/"+run["id"].(string)+"/retry",
		map[string]any{"params": map[string]any{"gate": "open"}}).body
	assert.Equal(t, run["id"], retry["retryOf"])
	assert.Equal(t, "retry", retry["trigger"])
	done := f.waitRun(t, "infra", retry["id"].(string), completed)
	assert.Equal(t, "succeeded", done["status"])
	a := done["tasks"].([]any)[1].(map[string]any)
	assert.Contains(t, a["statusMessage"], "kept from run")
	assert.Equal(t, named("one", "1", "two", "open"), done["results"])

	// A parent waits for its child and takes its status; results come along.
	f.defs.put("infra", chain("child", prop("c", "said", "$(params.word)")))
	f.defs.put("infra", chain("parent", map[string]any{"name": "kid", "type": "runworkflow", "params": []map[string]any{
		{"name": "workflowRef", "value": "child"}, {"name": "params", "value": map[string]any{"word": "$(params.region)"}}}},
		prop("after", "childSaid", "$(tasks.kid.results.said)")))
	parent := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/parent/submit?start=true", nil).body
	done = f.waitRun(t, "infra", parent["id"].(string), completed)
	assert.Equal(t, "succeeded", done["status"], done["statusMessage"])
	assert.Equal(t, named("childSaid", "us-east"), done["results"])
	kid := done["tasks"].([]any)[1].(map[string]any)
	// A run being put away in the archive may be counted twice for a moment: totals are
	// exact once it is.
	var page map[string]any
	require.Eventually(t, func() bool {
		page = f.must(t, http.StatusOK, reader, http.MethodGet, infra+"/workflowrun/query?page=0&limit=10&triggers=task", nil).body
		return page["totalElements"] == float64(1)
	}, 60*time.Second, 10*time.Millisecond)
	child := page["content"].([]any)[0].(map[string]any)
	assert.Equal(t, parent["id"], child["parentRun"], "%v", child)
	assert.Equal(t, child["id"], valueOf(t, kid["results"], "workflowRunRef"), "%v", kid)

	// Cancelling a parent cancels the child it waits for.
	f.defs.put("infra", chain("slowchild", map[string]any{"name": "nap", "type": "sleep", "params": []map[string]any{{"name": "duration", "value": 600000}}}))
	f.defs.put("infra", chain("waiter", map[string]any{"name": "kid", "type": "runworkflow", "params": []map[string]any{{"name": "workflowRef", "value": "slowchild"}}}))
	waiter := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/waiter/submit?start=true", nil).body
	running := f.waitRun(t, "infra", waiter["id"].(string), func(run map[string]any) bool {
		return run["tasks"].([]any)[1].(map[string]any)["workflowRunChildRef"] != nil
	})
	childID := running["tasks"].([]any)[1].(map[string]any)["workflowRunChildRef"].(string)
	f.must(t, http.StatusOK, owner, http.MethodDelete, infra+"/workflowrun/"+waiter["id"].(string)+"/cancel", nil)
	gone := f.waitRun(t, "infra", childID, completed)
	assert.Equal(t, "cancelled", gone["status"], "%v", gone)
}

func TestSleepIsADurableTimer(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.defs.put("infra", chain("nap", map[string]any{"name": "nap", "type": "sleep", "params": []map[string]any{{"name": "duration", "value": 300}}}))
	start := time.Now()
	run := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/nap/submit?start=true", nil).body
	done := f.waitRun(t, "infra", run["id"].(string), completed)
	assert.Equal(t, "succeeded", done["status"])
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
}

// A generic task goes to its queue's topic; an external worker answers on the task-update
// topic, with results the run takes.
func TestGenericTaskAnsweredByAWorker(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	queue := "deploys-" + strings.ReplaceAll(t.Name(), "/", "-")
	require.NoError(t, kafkax.EnsureTopics(context.Background(), f.kafka, 1, events.QueueTopic(queue)))
	deploy := map[string]any{"name": "deploy", "type": "generic", "results": []string{"url"},
		"params": []map[string]any{{"name": "queue", "value": queue}, {"name": "target", "value": "$(params.region)"}}}
	f.defs.put("infra", chain("ship", deploy, prop("after", "url", "$(tasks.deploy.results.url)")))
	id := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/ship/submit?start=true", nil).body["id"].(string)
	taskRun := id + ".1"

	got := f.consume(t, events.QueueTopic(queue), func(e event.Event) bool { return e.ID() == taskRun+"/1" })
	a, err := events.Decode[events.TaskAttempt](got[len(got)-1])
	require.NoError(t, err)
	assert.Equal(t, queue, a.Queue)
	assert.Equal(t, "us-east", a.Params["target"], "params are resolved before the worker gets them")
	assert.Equal(t, []string{"url"}, a.Results)

	f.publishUpdate(t, events.TaskUpdate{TaskRunID: taskRun, RunID: id, Attempt: 1, Kind: events.UpdateLog, Seq: 0, Log: "deploying\n"})
	f.publishUpdate(t, events.TaskUpdate{TaskRunID: taskRun, RunID: id, Attempt: 1, Kind: events.UpdateEnded, Status: "succeeded",
		Results: map[string]string{"url": "https://app.example"}})
	done := f.waitRun(t, "infra", id, completed)
	assert.Equal(t, "succeeded", done["status"], done["statusMessage"])
	assert.Equal(t, named("url", "https://app.example"), done["results"])
	log := f.must(t, http.StatusOK, reader, http.MethodGet, "/api/v2/taskrun/"+taskRun+"/log", nil)
	assert.Equal(t, "deploying\n", string(log.raw))
}

// A followed log streams what the task writes while it runs and ends with the task.
func TestFollowLogStreamsUntilTheTaskEnds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	build := map[string]any{"name": "build", "type": "script", "params": []map[string]any{{"name": "script", "value": "make"}}}
	f.defs.put("infra", chain("follow", build))
	id := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/follow/submit?start=true", nil).body["id"].(string)
	taskRun := id + ".1"
	f.consume(t, events.TaskDispatch, func(e event.Event) bool { return e.ID() == taskRun+"/1" })
	f.must(t, http.StatusOK, service, http.MethodPost, "/internal/v1/taskruns/"+taskRun+"/claim", map[string]any{"attempt": 1, "runner": "r1"})
	f.publishUpdate(t, events.TaskUpdate{TaskRunID: taskRun, RunID: id, Attempt: 1, Kind: events.UpdateLog, Seq: 0, Log: "compiling\n"})

	// Over a real connection, to read the stream while it is written.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = f.app.Listener(ln) }()
	t.Cleanup(func() { _ = ln.Close() })
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+ln.Addr().String()+"/api/v2/taskrun/"+taskRun+"/log?follow=true", nil)
	require.NoError(t, err)
	require.NoError(t, f.signer.SetHeaders(reader, req.Header.Set))
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, res.Header.Get("Content-Type"), "text/plain")
	body := bufio.NewReader(res.Body)
	first, err := body.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "compiling\n", first, "what is logged so far comes while the task runs")

	f.publishUpdate(t, events.TaskUpdate{TaskRunID: taskRun, RunID: id, Attempt: 1, Kind: events.UpdateLog, Seq: 1, Log: "linking\n"})
	f.publishUpdate(t, events.TaskUpdate{TaskRunID: taskRun, RunID: id, Attempt: 1, Kind: events.UpdateEnded, Status: "succeeded"})
	rest, err := io.ReadAll(body)
	require.NoError(t, err, "the stream ends with the task")
	assert.Equal(t, "linking\n", string(rest))
}

// Before a workflow or a team is deleted its runs that are not completed are counted, and
// with force cancelled.
func TestActiveRunsOfAWorkflow(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	build := map[string]any{"name": "build", "type": "script", "params": []map[string]any{{"name": "script", "value": "make"}}}
	f.defs.put("infra", chain("busy", build))
	f.defs.put("infra", chain("quick", prop("p", "x", "y")))
	id := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/busy/submit?start=true", nil).body["id"].(string)
	f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/quick/submit?start=true", nil)

	tests := []struct {
		path string
		want float64
	}{
		{"/internal/v1/teams/infra/activeruns?workflow=busy", 1},
		{"/internal/v1/teams/infra/activeruns?workflow=quick", 0},
		{"/internal/v1/teams/infra/activeruns", 1},
		{"/internal/v1/teams/other/activeruns", 0},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, f.must(t, http.StatusOK, service, http.MethodGet, tt.path, nil).body["active"], tt.path)
	}
	f.must(t, http.StatusForbidden, owner, http.MethodGet, "/internal/v1/teams/infra/activeruns", nil)

	got := f.must(t, http.StatusOK, service, http.MethodPost, "/internal/v1/teams/infra/activeruns/cancel?workflow=busy", nil).body
	assert.EqualValues(t, 1, got["cancelled"])
	run := f.waitRun(t, "infra", id, completed)
	assert.Equal(t, "cancelled", run["status"])
	assert.Contains(t, run["statusMessage"], "workflow busy is being deleted")
	assert.EqualValues(t, 0, f.must(t, http.StatusOK, service, http.MethodGet, "/internal/v1/teams/infra/activeruns", nil).body["active"])
}

// A deleted team's runs go with it: those in flight are cancelled, then every run, task
// run and log of the team is removed; another team's stay.
func TestTeamDeletedRemovesItsRuns(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	slow := map[string]any{"name": "wait", "type": "sleep", "params": []map[string]any{{"name": "duration", "value": 600000}}}
	f.defs.put("infra", chain("slow", slow))
	f.defs.put("infra", chain("quick", prop("p", "x", "y")))
	f.defs.put("ops", chain("quick", prop("p", "x", "y")))
	running := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/slow/submit?start=true", nil).body["id"].(string)
	done := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/quick/submit?start=true", nil).body["id"].(string)
	opsOwner := member("u-ops", "Oona Ops", "ops", auth.RoleOwner)
	other := f.must(t, http.StatusCreated, opsOwner, http.MethodPost, "/api/v2/team/ops/workflow/quick/submit?start=true", nil).body["id"].(string)

	e, err := events.New("team-deleted-infra", events.Source("identity"), events.TypeTeamDeleted, "/team/infra",
		events.TeamDeleted{ID: "t-infra", Name: "infra"})
	require.NoError(t, err)
	require.NoError(t, f.prod.Publish(context.Background(), events.TeamEvents, "infra", e))

	require.Eventually(t, func() bool {
		gone := true
		for _, id := range []string{running, done} {
			gone = gone && f.do(t, owner, http.MethodGet, infra+"/workflowrun/"+id, nil).code == http.StatusNotFound
		}
		return gone
	}, 20*time.Second, 20*time.Millisecond, "the team's runs are removed")
	f.must(t, http.StatusNotFound, reader, http.MethodGet, "/api/v2/taskrun/"+done+".1/log", nil)
	assert.EqualValues(t, 0, f.must(t, http.StatusOK, owner, http.MethodGet, infra+"/workflowrun/count", nil).body["status"].(map[string]any)["all"])
	f.must(t, http.StatusOK, opsOwner, http.MethodGet, "/api/v2/team/ops/workflowrun/"+other, nil)
}

// A value is masked by where it came from: whatever a secret was substituted into shows as
// the mask, in the run, its task runs and its events; a result a runner sent sealed is
// opened for the tasks after it and masked for everyone else.
func TestSecretsMaskedByProvenance(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const secret = "s3cr3t-value" // the fixture's global password parameter "token"
	script := map[string]any{"name": "build", "type": "script", "results": []string{"out"},
		"params": []map[string]any{{"name": "script", "value": "echo $(params.region) > $(results.out.path)"}}}
	f.defs.put("infra", chain("leaky",
		prop("direct", "direct", "$(global.params.token)"),
		prop("wrapped", "wrapped", "Bearer $(params.token)"),
		script,
		prop("passed", "passed", "$(tasks.build.results.out)"),
		prop("plain", "plain", "$(params.region)")))
	run := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/leaky/submit?start=true", nil).body
	id := run["id"].(string)
	taskRun := id + ".3"
	f.consume(t, events.TaskDispatch, func(e event.Event) bool { return e.ID() == taskRun+"/1" })
	f.must(t, http.StatusOK, service, http.MethodPost, "/internal/v1/taskruns/"+taskRun+"/claim", map[string]any{"attempt": 1, "runner": "r1"})
	box, err := secrets.FromString(testSecretKey)
	require.NoError(t, err)
	sealedOut, err := box.Seal("built with " + secret)
	require.NoError(t, err)
	f.publishUpdate(t, events.TaskUpdate{TaskRunID: taskRun, RunID: id, Attempt: 1, Kind: events.UpdateEnded, Status: "succeeded",
		Results: map[string]string{"out": sealedOut}})
	done := f.waitRun(t, "infra", id, completed)
	require.Equal(t, "succeeded", done["status"], done["statusMessage"])

	mask := secrets.Mask
	assert.Equal(t, named("direct", mask, "passed", mask, "plain", "us-east", "wrapped", mask), done["results"])
	tasks := done["tasks"].([]any)
	for _, k := range []int{1, 2, 4} {
		tr := tasks[k].(map[string]any)
		assert.Equal(t, mask, valueOf(t, tr["params"], "value"), tr["name"])
		assert.Equal(t, named(tr["name"], mask), tr["results"], tr["name"])
	}
	assert.Equal(t, named("out", mask), tasks[3].(map[string]any)["results"])
	assert.Equal(t, "us-east", valueOf(t, tasks[5].(map[string]any)["params"], "value"))
	got := f.must(t, http.StatusOK, reader, http.MethodGet, infra+"/workflowrun/"+id, nil)
	assert.NotContains(t, string(got.raw), secret)

	evs := f.consume(t, events.RunEvents, func(e event.Event) bool {
		return e.Type() == events.TypeStatusWorkflowRun && e.Subject() == "/workflowrun/"+id+"/status/succeeded"
	})
	for _, e := range evs {
		assert.NotContains(t, string(e.Data()), secret, e.ID())
	}
}

// A secret a parent passes to its child stays secret there, though the child's workflow
// does not declare it a password; and a child's result set from it stays secret in the
// parent.
func TestSecretsPassedToChildRuns(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const secret = "s3cr3t-value" // the fixture's global password parameter "token"
	f.defs.put("infra", chain("taker", prop("c", "echoed", "got $(params.word)")))
	f.defs.put("infra", chain("giver", map[string]any{"name": "kid", "type": "runworkflow", "params": []map[string]any{
		{"name": "workflowRef", "value": "taker"}, {"name": "params", "value": map[string]any{"word": "$(global.params.token)"}}}},
		prop("after", "fromChild", "$(tasks.kid.results.echoed)")))
	parent := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/giver/submit?start=true", nil).body
	done := f.waitRun(t, "infra", parent["id"].(string), completed)
	require.Equal(t, "succeeded", done["status"], done["statusMessage"])
	assert.Equal(t, named("fromChild", secrets.Mask), done["results"])
	kid := done["tasks"].([]any)[1].(map[string]any)
	assert.Equal(t, secrets.Mask, valueOf(t, kid["results"], "echoed"))
	child := f.waitRun(t, "infra", kid["workflowRunChildRef"].(string), completed)
	assert.Equal(t, named("word", secrets.Mask), child["params"])
	assert.Equal(t, named("echoed", secrets.Mask), child["results"])
	for _, id := range []string{parent["id"].(string), kid["workflowRunChildRef"].(string)} {
		got := f.must(t, http.StatusOK, reader, http.MethodGet, infra+"/workflowrun/"+id, nil)
		assert.NotContains(t, string(got.raw), secret)
	}
}

// What a workflow gives a catalogue task's password parameter is a secret wherever it
// goes: masked in the task run, in the attempt's log masking, and sealed in the dispatch.
func TestCatalogueTaskPasswordParam(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const hook = "https://hooks.example/T0/B1/literal-secret"
	f.defs.put("infra", chain("notifier", map[string]any{"name": "notify", "type": "template", "taskRef": "notify",
		"params": []map[string]any{{"name": "webhookUrl", "value": hook}}}))
	id := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/notifier/submit?start=true", nil).body["id"].(string)
	taskRun := id + ".1"
	dispatches := f.consume(t, events.TaskDispatch, func(e event.Event) bool { return e.ID() == taskRun+"/1" })
	dispatch := dispatches[len(dispatches)-1]
	assert.NotContains(t, string(dispatch.Data()), hook)
	sealed, err := events.Decode[events.TaskAttempt](dispatch)
	require.NoError(t, err)
	box, err := secrets.FromString(testSecretKey)
	require.NoError(t, err)
	a, err := sealed.Opened(box)
	require.NoError(t, err)
	assert.Equal(t, "curl -d hi "+hook, a.Spec.Script)
	assert.Contains(t, a.Secrets, hook)
	got := f.must(t, http.StatusOK, reader, http.MethodGet, infra+"/workflowrun/"+id, nil)
	assert.NotContains(t, string(got.raw), hook)
	assert.Equal(t, secrets.Mask, valueOf(t, got.body["tasks"].([]any)[1].(map[string]any)["params"], "webhookUrl"))
}

// The runs service does not start without a valid secret key: it would keep secrets in
// clear.
func TestConfigNeedsASecretKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, key, wantErr string
	}{
		{name: "missing", key: "", wantErr: "BATON_SECRET_KEY is required"},
		{name: "too short", key: "abcd", wantErr: "BATON_SECRET_KEY"},
		{name: "hex", key: testSecretKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := runs.ConfigFromEnv(func(k string) string { return map[string]string{"BATON_SECRET_KEY": tt.key}[k] })
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.key, cfg.SecretKey)
		})
	}
}

// Baton's own services submit runs with the trigger they start them by: each needs its
// trigger on (chat, a person's command, needs the manual one), and the answer carries
// the run as the API shows it.
func TestInternalSubmitByTrigger(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	on := map[string]any{"enabled": true}
	wf := chain("hooked", prop("p", "x", "y"))
	wf["triggers"] = map[string]any{"event": on, "webhook": on, "github": on}
	f.defs.put("infra", wf)
	closed := chain("closed", prop("p", "x", "y"))
	closed["triggers"] = map[string]any{"manual": map[string]any{"enabled": false}}
	f.defs.put("infra", closed)
	submit := func(workflow, trigger, key string) response {
		return f.do(t, service, http.MethodPost, "/internal/v1/teams/infra/workflows/"+workflow+"/runs", map[string]any{
			"trigger": trigger, "idempotencyKey": key, "params": map[string]any{"data": map[string]any{"a": 1}},
			"initiatedBy": map[string]any{"type": "event", "id": "src/1"}})
	}
	tests := []struct {
		workflow, trigger string
		want              int
		reason            string
	}{
		{"hooked", "event", http.StatusOK, ""},
		{"hooked", "webhook", http.StatusOK, ""},
		{"hooked", "codehost", http.StatusOK, ""},
		{"hooked", "chat", http.StatusOK, ""},
		{"hooked", "schedule", http.StatusBadRequest, "WORKFLOWRUN_TRIGGER_DISABLED"},
		{"closed", "chat", http.StatusBadRequest, "WORKFLOWRUN_TRIGGER_DISABLED"},
		{"closed", "event", http.StatusBadRequest, "WORKFLOWRUN_TRIGGER_DISABLED"},
		{"hooked", "manual", http.StatusBadRequest, "WORKFLOWRUN_INVALID_REQ"},
	}
	for _, tt := range tests {
		got := submit(tt.workflow, tt.trigger, tt.workflow+tt.trigger)
		require.Equal(t, tt.want, got.code, "%s by %s: %s", tt.workflow, tt.trigger, got.raw)
		if tt.want != http.StatusOK {
			assert.Equal(t, tt.reason, got.body["reason"], "%s by %s", tt.workflow, tt.trigger)
			continue
		}
		assert.Equal(t, true, got.body["created"])
		run := got.body["run"].(map[string]any)
		assert.Equal(t, got.body["id"], run["id"])
		assert.Equal(t, tt.trigger, run["trigger"])
		assert.Nil(t, run["tasks"], "answered without its tasks")
	}
	again := submit("hooked", "event", "hookedevent")
	assert.Equal(t, false, again.body["created"], "the same key is the same run")
}
