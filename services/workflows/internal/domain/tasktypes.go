package domain

import "slices"

// Task types (API.md §5).
const (
	TypeStart                = "start"
	TypeEnd                  = "end"
	TypeTemplate             = "template"
	TypeCustom               = "custom"
	TypeScript               = "script"
	TypeGeneric              = "generic"
	TypeDecision             = "decision"
	TypeSetWFProperty        = "setwfproperty"
	TypeSetWFStatus          = "setwfstatus"
	TypeSleep                = "sleep"
	TypeApproval             = "approval"
	TypeManual               = "manual"
	TypeEventWait            = "eventwait"
	TypeAcquireLock          = "acquirelock"
	TypeReleaseLock          = "releaselock"
	TypeRunWorkflow          = "runworkflow"
	TypeRunScheduledWorkflow = "runscheduledworkflow"
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
	TypeStart:         {},
	TypeEnd:           {},
	TypeTemplate:      {NeedsTaskRef: true},
	TypeCustom:        {OneOf: []string{"image", "script", "command"}},
	TypeScript:        {Required: [][]string{{"script"}}},
	TypeGeneric:       {Required: [][]string{{"queue"}}},
	TypeDecision:      {Required: [][]string{{"value"}}},
	TypeSetWFProperty: {Required: [][]string{{"output"}, {"value"}}},
	TypeSetWFStatus: {
		Required: [][]string{{"status"}},
		Values:   map[string][]string{"status": {"succeeded", "failed", "cancelled", "invalid", "timedout"}},
	},
	TypeSleep:       {Required: [][]string{{"duration"}}},
	TypeApproval:    {},
	TypeManual:      {Required: [][]string{{"instructions"}}},
	TypeEventWait:   {Required: [][]string{{"topic"}}},
	TypeAcquireLock: {Required: [][]string{{"key"}}},
	TypeReleaseLock: {Required: [][]string{{"key"}}},
	TypeRunWorkflow: {Required: [][]string{{"workflowRef"}}},
	TypeRunScheduledWorkflow: {
		Required: [][]string{{"workflowRef"}, {"futureIn"}, {"futurePeriod"}},
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
