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
