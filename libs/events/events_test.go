package events_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/golden"
)

// sampleTime is fixed so fixtures do not change from run to run.
var sampleTime = time.Date(2025, 3, 14, 15, 9, 26, 535000000, time.UTC)

// goldenCase is one sample of a payload type pinned by a fixture. decode reads the fixture's
// data back into the payload type so it can be compared with the sample.
type goldenCase struct {
	// service emits the event; identity when empty.
	service string
	// variant names a further sample of a type that has several shapes worth pinning; the
	// first sample of each type has none.
	variant string
	id      string
	typ     string
	subject string
	data    any
	decode  func(event.Event) (any, error)
}

// name is the case's fixture name without its extension: the type, then "--" and the
// variant if any (types never hold "--").
func (tc goldenCase) name() string {
	if tc.variant == "" {
		return tc.typ
	}
	return tc.typ + "--" + tc.variant
}

func decodeAs[T any](e event.Event) (any, error) { return events.Decode[T](e) }

// fakeSealer seals by encoding, so that a sealed fixture is the same on every run (the real
// box, libs/secrets, seals under a random nonce).
type fakeSealer struct{}

const fakeSealed = "sealed:"

func (fakeSealer) Seal(plain string) (string, error) {
	return fakeSealed + base64.StdEncoding.EncodeToString([]byte(plain)), nil
}

func (fakeSealer) Open(sealed string) (string, error) {
	enc, ok := strings.CutPrefix(sealed, fakeSealed)
	if !ok {
		return "", errors.New("not sealed by fakeSealer")
	}
	plain, err := base64.StdEncoding.DecodeString(enc)
	return string(plain), err
}

// sampleAttempt is a script task's attempt, as the runs service dispatches it to runners.
func sampleAttempt() events.TaskAttempt {
	return events.TaskAttempt{
		TaskRunID: "6650c0ffee00000000000b01",
		RunID:     "6650c0ffee00000000000b00",
		Team:      "platform",
		Workflow:  "build",
		Name:      "compile",
		Type:      "script",
		Attempt:   1,
		Deadline:  sampleTime.Add(time.Hour),
		Spec: events.TaskSpec{
			Image:      "golang:1.26",
			Script:     "go build -o bin/app ./cmd/app\necho -n bin/app > $(results.artifact.path)",
			Shell:      "/bin/sh",
			WorkingDir: "src",
			Env:        []events.EnvVar{{Name: "GOFLAGS", Value: "-mod=mod"}},
		},
		Results: []string{"artifact"},
	}
}

// sampleSecretAttempt is sampleAttempt carrying a secret, before it is sealed.
func sampleSecretAttempt() events.TaskAttempt {
	a := sampleAttempt()
	a.Spec.Env = append(a.Spec.Env, events.EnvVar{Name: "REGISTRY_TOKEN", Value: "s3cr3t-t0ken"})
	a.Secrets = []string{"s3cr3t-t0ken"}
	return a
}

func goldenCases(t *testing.T) []goldenCase {
	t.Helper()
	sealed := sampleSecretAttempt()
	require.NoError(t, sealed.Seal(fakeSealer{}))
	exitCode := 0

	return []goldenCase{
		{
			id:      "0b8f6f0e-3d2c-4b61-9a2e-5f1d2c3b4a01",
			typ:     events.TypeTeamCreated,
			subject: "/team/6650c0ffee0000000000000a",
			data: events.TeamCreated{
				ID:           "6650c0ffee0000000000000a",
				Name:         "platform",
				DisplayName:  "Platform Team",
				CreationDate: sampleTime,
			},
			decode: decodeAs[events.TeamCreated],
		},
		{
			id:      "0b8f6f0e-3d2c-4b61-9a2e-5f1d2c3b4a02",
			typ:     events.TypeTeamDeleted,
			subject: "/team/6650c0ffee0000000000000a",
			data: events.TeamDeleted{
				ID:   "6650c0ffee0000000000000a",
				Name: "platform",
			},
			decode: decodeAs[events.TeamDeleted],
		},
		{
			service: "workflows",
			id:      "workflow-saved-6650c0ffee0000000000000a-7",
			typ:     events.TypeWorkflowSaved,
			subject: "/team/platform/workflow/build",
			data: events.WorkflowSaved{
				Team:        "platform",
				Name:        "build",
				Version:     3,
				DisplayName: "Build",
				Status:      "active",
				Triggers:    events.WorkflowTriggers{Manual: true, Schedule: true},
				Author:      "Ada Lovelace",
				Date:        sampleTime,
			},
			decode: decodeAs[events.WorkflowSaved],
		},
		{
			service: "workflows",
			id:      "workflow-deleted-6650c0ffee0000000000000a-8",
			typ:     events.TypeWorkflowDeleted,
			subject: "/team/platform/workflow/build",
			data: events.WorkflowDeleted{
				Team:    "platform",
				Name:    "build",
				Version: 3,
				Date:    sampleTime,
			},
			decode: decodeAs[events.WorkflowDeleted],
		},
		{
			service: "schedules",
			id:      "run-requested-platform/build/6650c0ffee00000000000c01@2025-03-14T15:00:00Z",
			typ:     events.TypeRunRequested,
			subject: "/team/platform/workflow/build",
			data: events.RunRequest{
				Team:           "platform",
				Workflow:       "build",
				Params:         map[string]any{"branch": "main", "fullBuild": true},
				Labels:         map[string]string{"schedule": "nightly"},
				Trigger:        "schedule",
				IdempotencyKey: "6650c0ffee00000000000c01@2025-03-14T15:00:00Z",
				InitiatedBy:    events.Initiator{Type: "service", ID: "schedules", Name: "nightly"},
				RequestedAt:    time.Date(2025, 3, 14, 15, 0, 0, 0, time.UTC),
			},
			decode: decodeAs[events.RunRequest],
		},
		{
			service: "runs",
			id:      "6650c0ffee00000000000b00/succeeded/completed",
			typ:     events.TypeStatusWorkflowRun,
			subject: "/workflowrun/6650c0ffee00000000000b00/status/succeeded",
			data: events.WorkflowRun{
				ID:                  "6650c0ffee00000000000b00",
				WorkflowRef:         "build",
				WorkflowName:        "build",
				WorkflowDisplayName: "Build",
				WorkflowVersion:     3,
				Team:                "platform",
				Status:              "succeeded",
				Phase:               "completed",
				Trigger:             "manual",
				InitiatedBy:         events.Initiator{Type: "user", ID: "6650c0ffee00000000000a01", Name: "Ada Lovelace"},
				InitiatedByRef:      "6650c0ffee00000000000a01",
				InitiatedByUserName: "Ada Lovelace",
				Labels:              map[string]string{"env": "staging"},
				Annotations:         map[string]any{},
				Params: []events.NameValue{
					{Name: "branch", Value: "main"},
					{Name: "registryToken", Value: "********"},
				},
				Results:      []events.NameValue{{Name: "artifact", Value: "bin/app"}},
				CreationDate: sampleTime.Format(events.TimeFormat),
				StartTime:    sampleTime.Add(20 * time.Millisecond).Format(events.TimeFormat),
				Duration:     61234,
				Timeout:      60,
				RootRun:      "6650c0ffee00000000000b00",
			},
			decode: decodeAs[events.WorkflowRun],
		},
		{
			service: "runs",
			id:      "6650c0ffee00000000000b01/1/succeeded",
			typ:     events.TypeStatusTaskRun,
			subject: "/workflowrun/6650c0ffee00000000000b00/taskrun/6650c0ffee00000000000b01/status/succeeded",
			data: events.TaskRun{
				ID:             "6650c0ffee00000000000b01",
				Name:           "compile",
				Type:           "script",
				Status:         "succeeded",
				Phase:          "completed",
				WorkflowRunRef: "6650c0ffee00000000000b00",
				Params:         []events.NameValue{{Name: "target", Value: "./cmd/app"}},
				Results:        []events.NameValue{{Name: "artifact", Value: "bin/app"}},
				CreationDate:   sampleTime.Format(events.TimeFormat),
				StartTime:      sampleTime.Add(40 * time.Millisecond).Format(events.TimeFormat),
				Duration:       4200,
				Timeout:        30,
				Attempt:        1,
			},
			decode: decodeAs[events.TaskRun],
		},
		{
			service: "runs",
			id:      "6650c0ffee00000000000b00-2-1/approved",
			typ:     events.TypeStatusAction,
			subject: "/action/6650c0ffee00000000000b00-2-1/status/approved",
			data: events.Action{
				ID: "6650c0ffee00000000000b00-2-1", Type: "approval", Status: "approved", Team: "platform", TeamName: "platform",
				WorkflowRef: "deploy", WorkflowName: "Deploy", WorkflowRunRef: "6650c0ffee00000000000b00",
				TaskRunRef: "6650c0ffee00000000000b00.2", TaskName: "approve-prod", Instructions: "Check the **staging** run first.",
				ApproverGroupRef: "release-managers", NumberOfApprovers: 1, ApprovalsRequired: 1, NumberOfApprovals: 1,
				Actioners: []events.Actioner{{ApproverID: "6650c0ffee00000000000a01", ApproverName: "Ada Lovelace",
					ApproverEmail: "ada@example.com", Approved: true, Comments: "ship it", Date: sampleTime.Add(time.Hour).Format(events.TimeFormat)}},
				CreationDate: sampleTime.Format(events.TimeFormat), DecisionDate: sampleTime.Add(time.Hour).Format(events.TimeFormat),
			},
			decode: decodeAs[events.Action],
		},
		{
			service: "integrations",
			id:      "6650c0ffee00000000000b00/recorded/6,7,9",
			typ:     events.TypeStatusRecorded,
			data:    events.StatusRecorded{Run: "6650c0ffee00000000000b00", Seqs: []int64{6, 7, 9}},
			decode:  decodeAs[events.StatusRecorded],
		},
		{
			service: "runs",
			id:      "6650c0ffee00000000000b01/1",
			typ:     events.TypeTaskDispatch,
			data:    sampleAttempt(),
			decode:  decodeAs[events.TaskAttempt],
		},
		{
			service: "runs",
			variant: "sealed",
			id:      "6650c0ffee00000000000b01/1",
			typ:     events.TypeTaskDispatch,
			data:    sealed,
			decode:  decodeAs[events.TaskAttempt],
		},
		{
			// A `generic` task's attempt, on its queue's topic, for the queue's workers.
			service: "runs",
			variant: "generic",
			id:      "6650c0ffee00000000000b02/2",
			typ:     events.TypeTaskDispatch,
			data: events.TaskAttempt{
				TaskRunID: "6650c0ffee00000000000b02",
				RunID:     "6650c0ffee00000000000b00",
				Team:      "platform",
				Workflow:  "build",
				Name:      "notify",
				Type:      "generic",
				Attempt:   2,
				Deadline:  sampleTime.Add(30 * time.Minute),
				Queue:     "mail",
				Params:    map[string]any{"to": "team@example.com", "retries": 3.0, "tags": []any{"build", "nightly"}},
			},
			decode: decodeAs[events.TaskAttempt],
		},
		{
			service: "runner",
			id:      "6650c0ffee00000000000b01/1/ended",
			typ:     events.TypeTaskUpdate,
			data: events.TaskUpdate{
				TaskRunID: "6650c0ffee00000000000b01",
				RunID:     "6650c0ffee00000000000b00",
				Attempt:   1,
				Kind:      events.UpdateEnded,
				Runner:    "runner-0",
				Status:    "succeeded",
				ExitCode:  &exitCode,
				Results:   map[string]string{"artifact": "bin/app"},
				Time:      sampleTime,
			},
			decode: decodeAs[events.TaskUpdate],
		},
		{
			service: "runner",
			variant: "log",
			id:      "6650c0ffee00000000000b01/1/log/1",
			typ:     events.TypeTaskUpdate,
			data: events.TaskUpdate{
				TaskRunID: "6650c0ffee00000000000b01",
				RunID:     "6650c0ffee00000000000b00",
				Attempt:   1,
				Kind:      events.UpdateLog,
				Runner:    "runner-0",
				Seq:       1,
				Log:       "pushing with token ********\n",
				Time:      sampleTime,
			},
			decode: decodeAs[events.TaskUpdate],
		},
	}
}

func TestGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range goldenCases(t) {
		t.Run(tc.name(), func(t *testing.T) {
			t.Parallel()
			service := tc.service
			if service == "" {
				service = "identity"
			}
			e, err := events.New(tc.id, events.Source(service), tc.typ, tc.subject, tc.data)
			require.NoError(t, err)
			e.SetTime(sampleTime)
			raw, err := events.Marshal(e)
			require.NoError(t, err)
			want := golden.Match(t, tc.name(), raw)

			got, err := events.Unmarshal(want)
			require.NoError(t, err)
			assert.Equal(t, tc.typ, got.Type())
			assert.Equal(t, e.ID(), got.ID())
			assert.Equal(t, events.Source(service), got.Source())
			assert.Equal(t, tc.subject, got.Subject())
			assert.Equal(t, events.DataContentType, got.DataContentType())
			assert.True(t, sampleTime.Equal(got.Time()))
			data, err := tc.decode(got)
			require.NoError(t, err)
			assert.Equal(t, tc.data, data)

			// The payload type holds every field of the fixture: what it decoded encodes
			// back to the same bytes. For the status events this pins WorkflowRun and
			// TaskRun to the wire form of the runs service's answers.
			var wantData bytes.Buffer
			require.NoError(t, json.Compact(&wantData, got.Data()))
			again, err := json.Marshal(data)
			require.NoError(t, err)
			assert.Equal(t, wantData.String(), string(again), "data does not survive a decode and encode")
		})
	}
}

// TestSealedAttemptFixture checks that the sealed attempt's fixture carries nothing in
// clear and opens into the attempt that was sealed.
func TestSealedAttemptFixture(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("testdata", events.TypeTaskDispatch+"--sealed.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "s3cr3t-t0ken")
	e, err := events.Unmarshal(raw)
	require.NoError(t, err)
	a, err := events.Decode[events.TaskAttempt](e)
	require.NoError(t, err)
	require.NotEmpty(t, a.Sealed)

	opened, err := a.Opened(fakeSealer{})
	require.NoError(t, err)
	assert.Equal(t, sampleSecretAttempt(), opened)
	_, err = a.Opened(nil)
	assert.Error(t, err, "a sealed attempt needs a key")
}

// TestAllTypesListsEveryType reads the package's source for its Type constants, which Go
// cannot list at run time, so that a new type cannot be added without joining AllTypes (and
// so, by TestEveryTypeHasAFixture, without a fixture).
func TestAllTypesListsEveryType(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var declared []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		for _, decl := range file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "Type") || !name.IsExported() {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					require.True(t, ok && lit.Kind == token.STRING, "%s: %s is not a string literal", f, name.Name)
					v, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					declared = append(declared, v)
				}
			}
		}
	}
	require.NotEmpty(t, declared)
	assert.ElementsMatch(t, declared, events.AllTypes, "AllTypes must list every Type constant once")
}

// TestEveryTypeHasAFixture requires a golden case, and so a fixture testdata/<type>.json,
// for every type of AllTypes, and no case of a type missing from it.
func TestEveryTypeHasAFixture(t *testing.T) {
	t.Parallel()
	base := map[string]bool{}
	for _, tc := range goldenCases(t) {
		assert.Contains(t, events.AllTypes, tc.typ, "golden case %s is of a type missing from AllTypes", tc.name())
		if tc.variant == "" {
			assert.False(t, base[tc.typ], "two golden cases of %s without a variant", tc.typ)
			base[tc.typ] = true
		}
	}
	for _, typ := range events.AllTypes {
		assert.True(t, base[typ], "type %s has no golden case without a variant", typ)
		_, err := os.Stat(filepath.Join("testdata", typ+".json"))
		assert.NoError(t, err, "type %s has no fixture", typ)
	}
	assert.False(t, slices.ContainsFunc(events.AllTypes, func(typ string) bool { return strings.Contains(typ, "--") }),
		"a type holds the fixtures' variant separator")
}

func TestNoStaleFixtures(t *testing.T) {
	t.Parallel()
	var names []string
	for _, tc := range goldenCases(t) {
		names = append(names, tc.name())
	}
	golden.NoStale(t, names)
}

func TestTopic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, prefix, topic, want, wantDLQ string
	}{
		{"default prefix", events.DefaultTopicPrefix, events.TeamEvents, "baton.team.events", "baton.team.events.dlq"},
		{"custom prefix", "staging.baton.", events.TaskDispatch, "staging.baton.task.dispatch", "staging.baton.task.dispatch.dlq"},
		{"no prefix", "", events.RunEvents, "run.events", "run.events.dlq"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := events.Topic(tt.prefix, tt.topic)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantDLQ, events.DeadLetter(got))
		})
	}
}

func TestAllTopics(t *testing.T) {
	t.Parallel()
	assert.ElementsMatch(t, []string{
		"team.events", "workflow.events", "run.requests", "run.events", "task.dispatch", "task.updates", "run.events.recorded",
	}, events.AllTopics)
}

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		id      string
		source  string
		typ     string
		data    any
		wantErr bool
	}{
		{name: "valid", id: "1", source: "/baton/identity", typ: events.TypeTeamDeleted, data: events.TeamDeleted{ID: "t1"}},
		{name: "raw json data", id: "1", source: "/baton/identity", typ: events.TypeTeamDeleted, data: json.RawMessage(`{"id":"t1"}`)},
		{name: "missing id", source: "/baton/identity", typ: events.TypeTeamDeleted, data: events.TeamDeleted{}, wantErr: true},
		{name: "missing source", id: "1", typ: events.TypeTeamDeleted, data: events.TeamDeleted{}, wantErr: true},
		{name: "missing type", id: "1", source: "/baton/identity", data: events.TeamDeleted{}, wantErr: true},
		{name: "unencodable data", id: "1", source: "/baton/identity", typ: events.TypeTeamDeleted, data: make(chan int), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := events.New(tt.id, tt.source, tt.typ, "", tt.data)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.WithinDuration(t, time.Now(), e.Time(), time.Minute)
			got, err := events.Decode[events.TeamDeleted](e)
			require.NoError(t, err)
			assert.Equal(t, "t1", got.ID)
		})
	}
}

func TestUnmarshalRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		give string
	}{
		{"not json", `{{{`},
		{"empty object", `{}`},
		{"missing id", `{"specversion":"1.0","source":"/baton/x","type":"t"}`},
		{"missing type", `{"specversion":"1.0","id":"1","source":"/baton/x"}`},
		{"unknown spec version", `{"specversion":"9.9","id":"1","source":"/baton/x","type":"t"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := events.Unmarshal([]byte(tt.give))
			require.Error(t, err)
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	noData := event.New()
	noData.SetID("1")
	noData.SetSource("/baton/x")
	noData.SetType(events.TypeTeamDeleted)

	wrongShape, err := events.New("1", "/baton/x", events.TypeTeamDeleted, "", []int{1, 2})
	require.NoError(t, err)

	tests := []struct {
		name  string
		give  event.Event
		check func(t *testing.T, err error)
	}{
		{"no data", noData, func(t *testing.T, err error) { assert.ErrorIs(t, err, events.ErrNoData) }},
		{"wrong shape", wrongShape, func(t *testing.T, err error) { assert.Error(t, err) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := events.Decode[events.TeamDeleted](tt.give)
			tt.check(t, err)
		})
	}
}
