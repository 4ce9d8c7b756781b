package domain

import (
	"slices"
	"testing"
)

// A runworkflow task's params make its child run's request; a workflow of another team
// fails the task instead.
func TestMachineChildRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		params      map[string]any
		wantOK      bool
		wantRef     string
		wantVersion int
		wantWait    bool
	}{
		{name: "a name", params: map[string]any{"workflowRef": "deploy"}, wantOK: true, wantRef: "deploy", wantWait: true},
		{name: "the run's own team", params: map[string]any{"workflowRef": "team-a/deploy", "workflowVersion": 3}, wantOK: true, wantRef: "deploy", wantVersion: 3, wantWait: true},
		{name: "not waited for", params: map[string]any{"workflowRef": "deploy", "wait": "false"}, wantOK: true, wantRef: "deploy"},
		{name: "another team", params: map[string]any{"workflowRef": "team-b/deploy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.params["params"] = map[string]any{"who": "world"}
			def := &Definition{Tasks: []TaskDef{
				task("start", "start", nil),
				task("child", "runworkflow", tt.params, "start"),
				task("end", "end", nil, "child"),
			}}
			s, m := started(t, def, nil)
			s.Run.Team = "team-a"
			i := slices.IndexFunc(s.Tasks, func(t *TaskRun) bool { return t.Name == "child" })
			s.Tasks[i].Status, s.Tasks[i].Attempt = Running, 1
			c, ok := m.ChildRequest(i)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v (task %s: %s)", ok, tt.wantOK, s.Tasks[i].Status, s.Tasks[i].StatusMessage)
			}
			if !ok {
				if s.Tasks[i].Status != Invalid {
					t.Fatalf("task %s, want invalid", s.Tasks[i].Status)
				}
				return
			}
			if c.Workflow != tt.wantRef || c.Version != tt.wantVersion || c.Wait != tt.wantWait || c.Team != "team-a" {
				t.Fatalf("request %+v", c)
			}
			if c.Key != "child/r1/1/1" || c.ParentRun != "r1" || c.ParentTask != "child" || c.Depth != 1 || c.Params["who"] != "world" {
				t.Fatalf("request %+v", c)
			}
		})
	}
}
