// Package tasktype names the task types of API.md §5, shared by the services that
// validate workflows (workflows), catalogue tasks (tasks), run them (runs, runner).
package tasktype

// The task types. Start and End are structural: every workflow has one of each.
const (
	Start                = "start"
	End                  = "end"
	Template             = "template"
	Custom               = "custom"
	Script               = "script"
	Generic              = "generic"
	Decision             = "decision"
	SetWFProperty        = "setwfproperty"
	SetWFStatus          = "setwfstatus"
	Sleep                = "sleep"
	Approval             = "approval"
	Manual               = "manual"
	EventWait            = "eventwait"
	AcquireLock          = "acquirelock"
	ReleaseLock          = "releaselock"
	RunWorkflow          = "runworkflow"
	RunScheduledWorkflow = "runscheduledworkflow"
)

// catalogueTasks names the global catalogue task of each system type (the tasks service
// seeds them): the task a workflow task of that type runs when it names none.
var catalogueTasks = map[string]string{
	Decision:             "switch",
	EventWait:            "wait-for-event",
	Approval:             "manual-approval",
	Manual:               "manual-task",
	SetWFProperty:        "set-result-parameter",
	SetWFStatus:          "set-workflow-result-status",
	Sleep:                "sleep",
	AcquireLock:          "acquire-lock",
	ReleaseLock:          "release-lock",
	RunWorkflow:          "run-workflow",
	RunScheduledWorkflow: "run-scheduled-workflow",
	Custom:               "run-custom-task",
	Script:               "execute-shell",
	Generic:              "send-to-worker",
}

// CatalogueTask is the name of the global catalogue task of system type typ, "" for the
// types that have none (start, end, template).
func CatalogueTask(typ string) string { return catalogueTasks[typ] }
