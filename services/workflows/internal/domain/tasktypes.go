package domain

import (
	"slices"

	"github.com/baton-flow/baton/libs/tasktype"
)

// TaskType is what a task type asks of a task's params. Names list a param with its
// aliases, first the preferred one.
type TaskType struct {
	// NeedsTaskRef: the task runs a catalogue task's spec.
	NeedsTaskRef bool
	// Required params must be given a value.
	Required [][]string
	// OneOf: at least one of these params must be given a value.
	OneOf []string
	// Values limits a param's literal value (one without `$(…)`) to a set.
	Values map[string][]string
}

// TaskTypes are the known task types and their params.
var TaskTypes = map[string]TaskType{
	tasktype.Start:         {},
	tasktype.End:           {},
	tasktype.Template:      {NeedsTaskRef: true},
	tasktype.Custom:        {OneOf: []string{"image", "script", "command"}},
	tasktype.Script:        {Required: [][]string{{"script"}}},
	tasktype.Generic:       {Required: [][]string{{"queue"}}},
	tasktype.Decision:      {Required: [][]string{{"value"}}},
	tasktype.SetWFProperty: {Required: [][]string{{"output"}, {"value"}}},
	tasktype.SetWFStatus: {
		Required: [][]string{{"status"}},
		Values:   map[string][]string{"status": {"succeeded", "failed", "cancelled", "invalid", "timedout"}},
	},
	tasktype.Sleep:       {Required: [][]string{{"duration"}}},
	tasktype.Approval:    {},
	tasktype.Manual:      {Required: [][]string{{"instructions"}}},
	tasktype.EventWait:   {Required: [][]string{{"topic"}}},
	tasktype.AcquireLock: {Required: [][]string{{"key"}}},
	tasktype.ReleaseLock: {Required: [][]string{{"key"}}},
	tasktype.RunWorkflow: {Required: [][]string{{"workflowRef"}}},
	// When it is due: futureIn periods from now, or a time (a date and time); the runs
	// service checks the pair when the task runs, as it resolves references.
	tasktype.RunScheduledWorkflow: {
		Required: [][]string{{"workflowRef", "workflowId"}},
		OneOf:    []string{"futureIn", "time"},
		Values:   map[string][]string{"futurePeriod": {"minutes", "hours", "days", "weeks", "months"}},
	},
}

// TaskTypeNames lists the known task types in a stable order, for messages.
func TaskTypeNames() []string {
	out := make([]string, 0, len(TaskTypes))
	for name := range TaskTypes {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}
