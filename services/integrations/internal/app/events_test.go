package app

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/runsapi"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/libs/workflowsapi"
)

// fakeRuns is the runs service: one run per idempotency key of a workflow.
type fakeRuns struct {
	mu      sync.Mutex
	submits []submitted
	byKey   map[string]*events.WorkflowRun
	fail    error
}

type submitted struct {
	team, workflow string
	req            runsapi.SubmitRun
}

func newFakeRuns() *fakeRuns { return &fakeRuns{byKey: map[string]*events.WorkflowRun{}} }

func (r *fakeRuns) Submit(_ context.Context, team, workflow string, req runsapi.SubmitRun) (runsapi.SubmittedRun, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return runsapi.SubmittedRun{}, r.fail
	}
	r.submits = append(r.submits, submitted{team, workflow, req})
	k := team + "/" + workflow + "/" + req.IdempotencyKey
	if run, ok := r.byKey[k]; ok && req.IdempotencyKey != "" {
		return runsapi.SubmittedRun{RunState: runsapi.RunState{ID: run.ID}, Run: run}, nil
	}
	run := &events.WorkflowRun{ID: fmt.Sprintf("run-%d", len(r.submits)), Team: team, WorkflowRef: workflow, Trigger: req.Trigger,
		Status: "running", Phase: "running"}
	if req.IdempotencyKey == "" {
		k = run.ID
	}
	r.byKey[k] = run
	return runsapi.SubmittedRun{RunState: runsapi.RunState{ID: run.ID}, Created: true, Run: run}, nil
}

// created counts the runs made.
func (r *fakeRuns) created() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.byKey)
}

func (r *fakeRuns) last() submitted {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.submits[len(r.submits)-1]
}

// fakeWorkflows answers triggers from a table of `<team>/<workflow>/<kind>`.
type fakeWorkflows struct {
	mu    sync.Mutex
	trig  map[string]workflowsapi.Trigger
	asked atomic.Int64
	// gate, when set, holds every question until it is closed.
	gate chan struct{}
}

func (w *fakeWorkflows) Triggers(ctx context.Context, team, kind, workflow string) (workflowsapi.TriggeredWorkflows, error) {
	w.asked.Add(1)
	if w.gate != nil {
		select {
		case <-w.gate:
		case <-ctx.Done():
			return workflowsapi.TriggeredWorkflows{}, ctx.Err()
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if team != "ops" {
		return workflowsapi.TriggeredWorkflows{}, apperr.New(apperr.TeamNotFound, "Team '%s' was not found.", team)
	}
	t, ok := w.trig[team+"/"+workflow+"/"+kind]
	if !ok {
		return workflowsapi.TriggeredWorkflows{}, apperr.New(apperr.WorkflowNotFound, "Workflow '%s' was not found.", workflow)
	}
	return workflowsapi.TriggeredWorkflows{Workflows: []workflowsapi.TriggeredWorkflow{{Name: workflow, Status: "active", Trigger: t}}}, nil
}

func (w *fakeWorkflows) set(key string, t workflowsapi.Trigger) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.trig[key] = t
}

// memReceipts is Receipts in memory.
type memReceipts struct {
	mu   sync.Mutex
	recs map[string]Receipt
	// failCreate fails every CreateReceipt (a crash between the run and its record).
	failCreate bool
}

func (m *memReceipts) FindReceipt(_ context.Context, key string, since time.Time) (Receipt, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.recs[key]
	if !ok || d.Created.Before(since) {
		return Receipt{}, false, nil
	}
	return d, true, nil
}

func (m *memReceipts) CreateReceipt(_ context.Context, d Receipt, since time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failCreate {
		return fmt.Errorf("the database is gone")
	}
	if old, ok := m.recs[d.Key]; ok && !old.Created.Before(since) {
		return nil
	}
	m.recs[d.Key] = d
	return nil
}

type rig struct {
	runs  *fakeRuns
	wfs   *fakeWorkflows
	recs  *memReceipts
	clock *testkit.Clock
	ev    *Events
}

func newRig() *rig {
	r := &rig{runs: newFakeRuns(), recs: &memReceipts{recs: map[string]Receipt{}},
		clock: testkit.NewClock(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)),
		wfs: &fakeWorkflows{trig: map[string]workflowsapi.Trigger{
			"ops/build/event":   {Enabled: true},
			"ops/build/webhook": {Enabled: true},
			"ops/off/event":     {Enabled: false},
			"ops/off/webhook":   {Enabled: false},
			"ops/push/event": {Enabled: true, Conditions: []workflowsapi.Condition{
				{Field: "$.type", Operation: "equals", Value: "com.example.push"},
				{Field: "$.data.branch", Operation: "matches", Value: "main|release-.*"},
			}},
			"ops/push/webhook": {Enabled: true, Conditions: []workflowsapi.Condition{{Field: "$.action", Operation: "in", Values: []string{"opened", "synchronize"}}}},
		}}}
	r.ev = NewEvents(r.runs, NewTriggerCache(r.wfs, time.Second, r.clock.Now), r.recs, r.clock.Now, nil)
	return r
}

var admin = auth.Principal{Type: auth.TypeUser, ID: "u1", Name: "Ada", Email: "ada@example.com", Roles: []string{"admin"}, Person: "u1"}

func as(p auth.Principal) context.Context { return auth.WithPrincipal(context.Background(), p) }

// newEvent is a valid event of source and id with JSON data (none when data is "").
func newEvent(source, id, subject, data string) event.Event {
	e := event.New()
	e.SetID(id)
	e.SetSource(source)
	e.SetType("com.example.push")
	e.SetSubject(subject)
	if data != "" {
		if err := e.SetData(event.ApplicationJSON, json.RawMessage(data)); err != nil {
			panic(err)
		}
	}
	return e
}

func reason(err error) string {
	if e, ok := apperr.As(err); ok {
		return e.Reason.Name
	}
	if err != nil {
		return "other: " + err.Error()
	}
	return ""
}

func TestAcceptParams(t *testing.T) {
	t.Parallel()
	r := newRig()
	e := newEvent("/ci", "1", "ops/build/extra", `{"branch":"main","n":42,"nested":{"a":[1,2]},"event":"mine","data":"also mine","":"nameless"}`)
	e.SetExtension("traceid", "abc")
	e.SetTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	got, err := r.ev.Accept(as(admin), "", []event.Event{e})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.True(t, got[0].Created)
	s := r.runs.last()
	assert.Equal(t, "ops", s.team)
	assert.Equal(t, "build", s.workflow)
	assert.Equal(t, "event", s.req.Trigger)
	assert.Equal(t, runsapi.Initiator{Type: "user", ID: "u1", Name: "Ada", Person: "u1"}, s.req.InitiatedBy)
	assert.NotEmpty(t, s.req.IdempotencyKey)
	raw, err := json.Marshal(s.req.Params)
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"event": {"specversion":"1.0","id":"1","source":"/ci","type":"com.example.push","subject":"ops/build/extra",
			"time":"2026-01-02T03:04:05Z","datacontenttype":"application/json","traceid":"abc",
			"data":{"branch":"main","n":42,"nested":{"a":[1,2]},"event":"mine","data":"also mine","":"nameless"}},
		"data": {"branch":"main","n":42,"nested":{"a":[1,2]},"event":"mine","data":"also mine","":"nameless"},
		"branch":"main","n":42,"nested":{"a":[1,2]}}`, string(raw))
}

func TestAcceptData(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		ct       string
		data     []byte
		base64   bool
		want     any // the data param; nil: none
		wantKeys []string
	}{
		{name: "no data", want: nil},
		{name: "JSON object", ct: "application/json", data: []byte(`{"a":1}`), want: map[string]any{"a": json.Number("1")}, wantKeys: []string{"a"}},
		{name: "JSON list", ct: "application/json; charset=utf-8", data: []byte(`[1,"x"]`), want: []any{json.Number("1"), "x"}},
		{name: "vendor JSON", ct: "application/vnd.example+json", data: []byte(`"s"`), want: "s"},
		{name: "text", ct: "text/plain", data: []byte("hello {"), want: "hello {"},
		{name: "no type, JSON", data: []byte(`{"b":true}`), want: map[string]any{"b": true}, wantKeys: []string{"b"}},
		{name: "no type, text", data: []byte("plain words"), want: "plain words"},
		{name: "bytes", ct: "application/octet-stream", data: []byte{0xff, 0x00, 0x01}, want: "/wAB"},
		{name: "sent base64", ct: "text/plain", data: []byte("hi"), base64: true, want: "aGk="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig()
			e := newEvent("/ci", "1", "ops/build", "")
			if tt.data != nil {
				e.DataEncoded = tt.data
				e.DataBase64 = tt.base64
				if tt.ct != "" {
					e.SetDataContentType(tt.ct)
				}
			}
			_, err := r.ev.Accept(as(admin), "", []event.Event{e})
			require.NoError(t, err)
			params := r.runs.last().req.Params
			data, has := params["data"]
			assert.Equal(t, tt.want != nil, has)
			assert.Equal(t, tt.want, data)
			assert.Equal(t, tt.want, params["event"].(map[string]any)["data"])
			assert.Len(t, params, 2+len(tt.wantKeys)-map[bool]int{true: 0, false: 1}[has])
		})
	}
}

func TestAcceptRefusals(t *testing.T) {
	t.Parallel()
	deep := ""
	for range 70 {
		deep += "["
	}
	for range 70 {
		deep += "]"
	}
	tests := []struct {
		name string
		ref  string
		ev   func() event.Event
		want string
	}{
		{"no workflow", "", func() event.Event { return newEvent("/ci", "1", "", "") }, "REQUEST_INVALID"},
		{"subject of one segment", "", func() event.Event { return newEvent("/ci", "1", "ops", "") }, "REQUEST_INVALID"},
		{"bad ref", "ops", func() event.Event { return newEvent("/ci", "1", "", "") }, "REQUEST_INVALID"},
		{"NUL in ref", "ops/bu\x00ild", func() event.Event { return newEvent("/ci", "1", "", "") }, "REQUEST_INVALID"},
		{"odd characters in the subject", "", func() event.Event { return newEvent("/ci", "1", "ops/b%2Fu ild", "") }, "REQUEST_INVALID"},
		{"no id", "ops/build", func() event.Event { e := newEvent("/ci", "1", "", ""); e.SetID(""); return e }, "REQUEST_INVALID"},
		{"no type", "ops/build", func() event.Event { e := newEvent("/ci", "1", "", ""); e.SetType(""); return e }, "REQUEST_INVALID"},
		{"spec 0.3", "ops/build", func() event.Event { e := newEvent("/ci", "1", "", ""); e.SetSpecVersion("0.3"); return e }, "REQUEST_INVALID"},
		{"a huge id", "ops/build", func() event.Event { return newEvent("/ci", string(make([]byte, MaxAttribute+1)), "", "") }, "REQUEST_INVALID"},
		{"data not JSON", "ops/build", func() event.Event {
			e := newEvent("/ci", "1", "", "")
			e.DataEncoded = []byte("{nope")
			e.SetDataContentType("application/json")
			return e
		}, "REQUEST_INVALID"},
		{"data nested too deep", "ops/build", func() event.Event {
			e := newEvent("/ci", "1", "", "")
			e.DataEncoded = []byte(deep)
			e.SetDataContentType("application/json")
			return e
		}, "REQUEST_INVALID"},
		{"unknown workflow", "ops/nope", func() event.Event { return newEvent("/ci", "1", "", "") }, "WORKFLOW_NOT_FOUND"},
		{"unknown team", "", func() event.Event { return newEvent("/ci", "1", "dev/build/x", "") }, "TEAM_NOT_FOUND"},
		{"trigger off", "ops/off", func() event.Event { return newEvent("/ci", "1", "", "") }, "WORKFLOWRUN_TRIGGER_DISABLED"},
		{"condition on type", "ops/push", func() event.Event {
			e := newEvent("/ci", "1", "", `{"branch":"main"}`)
			e.SetType("com.example.tag")
			return e
		}, "WORKFLOWRUN_TRIGGER_DISABLED"},
		{"condition on data", "ops/push", func() event.Event { return newEvent("/ci", "1", "", `{"branch":"feature"}`) }, "WORKFLOWRUN_TRIGGER_DISABLED"},
		{"condition on missing data", "ops/push", func() event.Event { return newEvent("/ci", "1", "", "") }, "WORKFLOWRUN_TRIGGER_DISABLED"},
		{"conditions hold", "ops/push", func() event.Event { return newEvent("/ci", "1", "", `{"branch":"release-2"}`) }, ""},
		{"ref wins over the subject", "ops/build", func() event.Event { return newEvent("/ci", "1", "dev/nope", "") }, ""},
		{"subject with a leading slash", "", func() event.Event { return newEvent("/ci", "1", "/ops/build/x/y", "") }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig()
			_, err := r.ev.Accept(as(admin), tt.ref, []event.Event{tt.ev()})
			assert.Equal(t, tt.want, reason(err), "%v", err)
			if tt.want != "" {
				assert.Zero(t, r.runs.created(), "no run for a refused event")
			} else {
				assert.Equal(t, 1, r.runs.created())
			}
		})
	}
}

func TestConditionMessageNamesTheCondition(t *testing.T) {
	t.Parallel()
	r := newRig()
	_, err := r.ev.Accept(as(admin), "ops/push", []event.Event{newEvent("/ci", "1", "", `{"branch":"feature"}`)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "condition 2 ($.data.branch matches) does not hold")
}

func TestAcceptPrincipals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    *auth.Principal
		ref  string
		want string
	}{
		{"no principal", nil, "ops/build", "UNAUTHENTICATED"},
		{"anonymous", &auth.Anonymous, "ops/build", "UNAUTHENTICATED"},
		{"an editor", &auth.Principal{Type: auth.TypeUser, ID: "u2", Teams: map[string]string{"ops": "editor"}}, "ops/build", ""},
		{"a session of an owner", &auth.Principal{Type: auth.TypeSession, ID: "s1", Teams: map[string]string{"ops": "owner"}}, "ops/build", ""},
		{"a reader", &auth.Principal{Type: auth.TypeUser, ID: "u3", Teams: map[string]string{"ops": "reader"}}, "ops/build", "PERMISSION_DENIED"},
		{"another team's member", &auth.Principal{Type: auth.TypeUser, ID: "u4", Teams: map[string]string{"dev": "owner"}}, "ops/build", "PERMISSION_DENIED"},
		{"a stranger, an unknown workflow", &auth.Principal{Type: auth.TypeUser, ID: "u4"}, "ops/nope", "PERMISSION_DENIED"},
		{"a stranger, an unknown team", &auth.Principal{Type: auth.TypeUser, ID: "u4"}, "dev/nope", "PERMISSION_DENIED"},
		{"the team's token", &auth.Principal{Type: auth.TypeTeam, ID: "ops", Team: "ops", Permissions: []string{"workflowrun/write"}}, "ops/build", ""},
		{"another team's token", &auth.Principal{Type: auth.TypeTeam, ID: "dev", Team: "dev", Permissions: []string{"**/**"}}, "ops/build", "PERMISSION_DENIED"},
		{"a team token that only reads", &auth.Principal{Type: auth.TypeTeam, ID: "ops", Team: "ops", Permissions: []string{"**/read"}}, "ops/build", "PERMISSION_DENIED"},
		{"the workflow's token", &auth.Principal{Type: auth.TypeWorkflow, ID: "ops/build", Team: "ops", Workflow: "build", Permissions: []string{"workflowrun/write"}}, "ops/build", ""},
		{"another workflow's token", &auth.Principal{Type: auth.TypeWorkflow, ID: "ops/push", Team: "ops", Workflow: "push", Permissions: []string{"workflowrun/write"}}, "ops/build", "PERMISSION_DENIED"},
		{"a global token that may", &auth.Principal{Type: auth.TypeGlobal, ID: "g1", Permissions: []string{"workflowrun/write"}}, "ops/build", ""},
		{"a global token that may not", &auth.Principal{Type: auth.TypeGlobal, ID: "g2", Permissions: []string{"workflow/write"}}, "ops/build", "PERMISSION_DENIED"},
		{"an admin, an unknown team", &admin, "dev/nope", "TEAM_NOT_FOUND"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig()
			ctx := context.Background()
			if tt.p != nil {
				ctx = as(*tt.p)
			}
			_, err := r.ev.Accept(ctx, tt.ref, []event.Event{newEvent("/ci", "1", "", "")})
			assert.Equal(t, tt.want, reason(err), "%v", err)
			_, err = r.ev.Webhook(ctx, tt.ref, map[string]any{}, "")
			assert.Equal(t, tt.want, reason(err), "webhook: %v", err)
			if tt.want == "" {
				s := r.runs.last()
				assert.Equal(t, tt.p.Type, s.req.InitiatedBy.Type)
				assert.Equal(t, tt.p.ID, s.req.InitiatedBy.ID)
			}
		})
	}
}

func TestAcceptDedup(t *testing.T) {
	t.Parallel()
	r := newRig()
	e := newEvent("/ci", "same", "ops/build", `{"a":1}`)
	first, err := r.ev.Accept(as(admin), "", []event.Event{e})
	require.NoError(t, err)
	require.True(t, first[0].Created)
	r.ev.Wait()

	again, err := r.ev.Accept(as(admin), "", []event.Event{e})
	require.NoError(t, err)
	assert.False(t, again[0].Created)
	assert.Equal(t, first[0].Run.ID, again[0].Run.ID)
	assert.Len(t, r.runs.submits, 1, "a delivery seen before is answered from its record")

	// Seen before, it is answered even with its trigger since turned off.
	r.wfs.set("ops/build/event", workflowsapi.Trigger{Enabled: false})
	r.clock.Add(2 * time.Second)
	again, err = r.ev.Accept(as(admin), "", []event.Event{e})
	require.NoError(t, err)
	assert.Equal(t, first[0].Run.ID, again[0].Run.ID)
	r.wfs.set("ops/build/event", workflowsapi.Trigger{Enabled: true})

	other, err := r.ev.Accept(as(admin), "", []event.Event{newEvent("/other", "same", "ops/build", "")})
	require.NoError(t, err)
	r.ev.Wait()
	assert.True(t, other[0].Created, "another source is another event")
	assert.NotEqual(t, first[0].Run.ID, other[0].Run.ID)

	// Past its life the record names nothing (the runs service forgets the key too).
	r.clock.Add(ReceiptTTL)
	r.runs.mu.Lock()
	clear(r.runs.byKey)
	r.runs.mu.Unlock()
	late, err := r.ev.Accept(as(admin), "", []event.Event{e})
	require.NoError(t, err)
	assert.True(t, late[0].Created)
	assert.NotEqual(t, first[0].Run.ID, late[0].Run.ID)
}

func TestAcceptDedupWithoutTheRecord(t *testing.T) {
	t.Parallel()
	r := newRig()
	e := newEvent("/ci", "crash", "ops/build", "")
	r.recs.failCreate = true
	first, err := r.ev.Accept(as(admin), "", []event.Event{e})
	require.NoError(t, err, "the run is answered; its record is the key's second line")
	require.True(t, first[0].Created)
	r.ev.Wait()
	r.recs.mu.Lock()
	assert.Empty(t, r.recs.recs, "the record could not be written")
	r.recs.failCreate = false
	r.recs.mu.Unlock()
	got, err := r.ev.Accept(as(admin), "", []event.Event{e})
	require.NoError(t, err)
	assert.False(t, got[0].Created, "the run's idempotency key names the first run")
	assert.Equal(t, 1, r.runs.created())
}

func TestAcceptConcurrentTwins(t *testing.T) {
	t.Parallel()
	r := newRig()
	const n = 16
	var wg sync.WaitGroup
	created := atomic.Int64{}
	ids := make([]string, n)
	for i := range n {
		wg.Go(func() {
			got, err := r.ev.Accept(as(admin), "", []event.Event{newEvent("/ci", "twin", "ops/build", "")})
			if !assert.NoError(t, err) {
				return
			}
			ids[i] = got[0].Run.ID
			if got[0].Created {
				created.Add(1)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 1, r.runs.created())
	assert.Equal(t, int64(1), created.Load())
	for _, id := range ids {
		assert.Equal(t, ids[0], id)
	}
}

func TestAcceptBatch(t *testing.T) {
	t.Parallel()
	r := newRig()
	evs := []event.Event{
		newEvent("/ci", "1", "ops/build", `{"k":1}`),
		newEvent("/ci", "2", "ops/push", `{"branch":"main"}`),
		newEvent("/ci", "1", "ops/build", `{"k":1}`),
	}
	got, err := r.ev.Accept(as(admin), "", evs)
	require.NoError(t, err)
	require.Len(t, got, 3)
	assert.True(t, got[0].Created)
	assert.True(t, got[1].Created)
	assert.False(t, got[2].Created, "the same event twice in a batch is one run")
	assert.Equal(t, got[0].Run.ID, got[2].Run.ID)
	assert.Equal(t, "build", r.runs.submits[0].workflow, "in order")
	assert.Equal(t, "push", r.runs.submits[1].workflow)

	bad := []event.Event{newEvent("/ci", "3", "ops/build", ""), newEvent("/ci", "4", "ops/push", `{"branch":"feature"}`)}
	_, err = r.ev.Accept(as(admin), "", bad)
	assert.Equal(t, "WORKFLOWRUN_TRIGGER_DISABLED", reason(err))
	assert.Contains(t, err.Error(), "Event 1 of the batch")
	assert.Equal(t, 2, r.runs.created(), "a batch with one refused event starts nothing")

	member := auth.Principal{Type: auth.TypeWorkflow, ID: "ops/build", Team: "ops", Workflow: "build", Permissions: []string{"workflowrun/write"}}
	_, err = r.ev.Accept(as(member), "", []event.Event{newEvent("/ci", "5", "ops/build", ""), newEvent("/ci", "6", "ops/push", `{"branch":"main"}`)})
	assert.Equal(t, "PERMISSION_DENIED", reason(err))
	assert.Equal(t, 2, r.runs.created())

	big := make([]event.Event, MaxBatch+1)
	for i := range big {
		big[i] = newEvent("/ci", fmt.Sprint("b", i), "ops/build", "")
	}
	_, err = r.ev.Accept(as(admin), "", big)
	assert.Equal(t, "REQUEST_TOO_LARGE", reason(err))
	_, err = r.ev.Accept(as(admin), "", nil)
	assert.Equal(t, "REQUEST_INVALID", reason(err))
	assert.Equal(t, 2, r.runs.created())

	r.runs.fail = apperr.New(apperr.QuotaExceeded, "no more")
	_, err = r.ev.Accept(as(admin), "", []event.Event{newEvent("/ci", "7", "ops/build", "")})
	assert.Equal(t, "QUOTA_EXCEEDED", reason(err), "the runs service's refusal is answered")
}

func TestWebhook(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ref  string
		body any
		key  string
		want string
	}{
		{name: "a body", ref: "ops/build", body: map[string]any{"x": "y"}},
		{name: "a null body", ref: "ops/build"},
		{name: "conditions hold", ref: "ops/push", body: map[string]any{"action": "opened"}},
		{name: "conditions do not", ref: "ops/push", body: map[string]any{"action": "closed"}, want: "WORKFLOWRUN_TRIGGER_DISABLED"},
		{name: "trigger off", ref: "ops/off", want: "WORKFLOWRUN_TRIGGER_DISABLED"},
		{name: "no ref", want: "REQUEST_INVALID"},
		{name: "a huge key", ref: "ops/build", key: string(make([]byte, MaxAttribute+1)), want: "REQUEST_INVALID"},
		{name: "unknown", ref: "ops/nope", want: "WORKFLOW_NOT_FOUND"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig()
			got, err := r.ev.Webhook(as(admin), tt.ref, tt.body, tt.key)
			assert.Equal(t, tt.want, reason(err), "%v", err)
			if tt.want != "" {
				assert.Zero(t, r.runs.created())
				return
			}
			assert.True(t, got.Created)
			s := r.runs.last()
			assert.Equal(t, "webhook", s.req.Trigger)
			assert.Empty(t, s.req.IdempotencyKey)
			assert.Equal(t, map[string]any{"data": tt.body}, s.req.Params)
		})
	}
}

func TestWebhookIdempotencyKey(t *testing.T) {
	t.Parallel()
	r := newRig()
	first, err := r.ev.Webhook(as(admin), "ops/build", "a", "delivery-1")
	require.NoError(t, err)
	r.ev.Wait()
	again, err := r.ev.Webhook(as(admin), "ops/build", "a", "delivery-1")
	require.NoError(t, err)
	other, err := r.ev.Webhook(as(admin), "ops/build", "a", "delivery-2")
	require.NoError(t, err)
	none1, err := r.ev.Webhook(as(admin), "ops/build", "a", "")
	require.NoError(t, err)
	none2, err := r.ev.Webhook(as(admin), "ops/build", "a", "")
	require.NoError(t, err)
	assert.True(t, first.Created)
	assert.False(t, again.Created)
	assert.Equal(t, first.Run.ID, again.Run.ID)
	assert.True(t, other.Created)
	assert.NotEqual(t, first.Run.ID, other.Run.ID)
	assert.NotEqual(t, none1.Run.ID, none2.Run.ID, "without a key every delivery is a run")
	assert.Equal(t, 4, r.runs.created())
}

func TestTriggerCache(t *testing.T) {
	t.Parallel()
	r := newRig()
	c := NewTriggerCache(r.wfs, time.Second, r.clock.Now)
	ctx := context.Background()
	for range 3 {
		w, err := c.Get(ctx, "ops", "event", "build")
		require.NoError(t, err)
		assert.True(t, w.Trigger.Enabled)
	}
	assert.Equal(t, int64(1), r.wfs.asked.Load(), "kept")

	r.wfs.set("ops/build/event", workflowsapi.Trigger{Enabled: false})
	r.clock.Add(time.Second)
	w, err := c.Get(ctx, "ops", "event", "build")
	require.NoError(t, err)
	assert.False(t, w.Trigger.Enabled, "read again past the TTL")

	r.wfs.set("ops/build/event", workflowsapi.Trigger{Enabled: true})
	c.Forget("ops", "build")
	w, err = c.Get(ctx, "ops", "event", "build")
	require.NoError(t, err)
	assert.True(t, w.Trigger.Enabled, "read again once forgotten")

	before := r.wfs.asked.Load()
	for range 2 {
		_, err = c.Get(ctx, "ops", "event", "nope")
		assert.Equal(t, "WORKFLOW_NOT_FOUND", reason(err))
	}
	assert.Equal(t, before+2, r.wfs.asked.Load(), "failures are not kept")
}

func TestTriggerCacheAsksOnce(t *testing.T) {
	t.Parallel()
	r := newRig()
	r.wfs.gate = make(chan struct{})
	c := NewTriggerCache(r.wfs, time.Second, r.clock.Now)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := c.Get(context.Background(), "ops", "event", "build")
			assert.NoError(t, err)
		})
	}
	require.Eventually(t, func() bool { return r.wfs.asked.Load() == 1 }, 10*time.Second, time.Millisecond)
	close(r.wfs.gate)
	wg.Wait()
	assert.Equal(t, int64(1), r.wfs.asked.Load(), "one question for all who waited")
}

// Baton's own status events start runs only from a run's end, and the runs so started
// count their place in the chain, which stops at MaxChain: a sink sending them back here
// cannot start runs without limit.
func TestRunsStartedByRunsEndsStop(t *testing.T) {
	t.Parallel()
	status := func(id, typ, phase, chain string) event.Event {
		e := event.New()
		e.SetID(id)
		e.SetSource(events.Source("runs"))
		e.SetType(typ)
		e.SetSubject("ops/build")
		labels := map[string]any{}
		if chain != "" {
			labels[ChainLabel] = chain
		}
		if err := e.SetData(event.ApplicationJSON, map[string]any{"id": "r1", "phase": phase, "status": "succeeded", "labels": labels}); err != nil {
			panic(err)
		}
		return e
	}
	tests := []struct {
		name      string
		ev        event.Event
		wantLabel string
		wantErr   string
	}{
		{"another system's event starts a run outside any chain", newEvent("https://ci.example.com", "1", "ops/build", `{"a":1}`), "", ""},
		{"a run's end starts the first of a chain", status("r1/succeeded/completed", events.TypeStatusWorkflowRun, "completed", ""), "1", ""},
		{"the chain goes on", status("r2/succeeded/completed", events.TypeStatusWorkflowRun, "completed", "9"), "10", ""},
		{"and stops at MaxChain", status("r3/succeeded/completed", events.TypeStatusWorkflowRun, "completed", "10"), "", "a chain stops at 10"},
		{"a run that has not ended starts none", status("r4/running/running", events.TypeStatusWorkflowRun, "running", ""), "", "phase completed"},
		{"nor does a task run's status", status("r5.1/1/succeeded", events.TypeStatusTaskRun, "completed", ""), "", "do not start runs"},
		{"nor an action's", status("a1/submitted", events.TypeStatusAction, "", ""), "", "do not start runs"},
		{"a forged count is refused", status("r6/succeeded/completed", events.TypeStatusWorkflowRun, "completed", "-3"), "", "not a count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig()
			_, err := r.ev.Accept(as(admin), "", []event.Event{tt.ev})
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, "REQUEST_INVALID", reason(err))
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.Zero(t, r.runs.created())
				return
			}
			require.NoError(t, err)
			labels := r.runs.last().req.Labels
			if tt.wantLabel == "" {
				assert.Empty(t, labels)
			} else {
				assert.Equal(t, map[string]string{ChainLabel: tt.wantLabel}, labels)
			}
		})
	}

	// A sink pointed at the webhook is held to the same rule.
	r := newRig()
	_, err := r.ev.Webhook(as(admin), "ops/build", map[string]any{"specversion": "1.0", "type": events.TypeStatusTaskRun, "data": map[string]any{}}, "")
	assert.Equal(t, "REQUEST_INVALID", reason(err))
	_, err = r.ev.Webhook(as(admin), "ops/build", map[string]any{"specversion": "1.0", "type": events.TypeStatusWorkflowRun,
		"data": map[string]any{"phase": "completed", "labels": map[string]any{ChainLabel: "4"}}}, "")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{ChainLabel: "5"}, r.runs.last().req.Labels)
}
