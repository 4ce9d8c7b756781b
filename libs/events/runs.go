package events

// Run status event types.
const (
	// TypeStatusWorkflowRun is a run's status change, published by the runs service on
	// RunEvents keyed by run id, for delivery to the HTTP sinks of settings (API.md §7).
	// Subject "/workflowrun/<id>/status/<status>"; data the run (the contract's
	// WorkflowRun), secrets masked; id "<runId>/<status>/<phase>".
	TypeStatusWorkflowRun = "io.baton.event.status.workflowrun"
	// TypeStatusTaskRun is a task run's status change, published like
	// TypeStatusWorkflowRun, keyed by its run's id. Subject
	// "/workflowrun/<runId>/taskrun/<id>/status/<status>"; data the task run (the
	// contract's TaskRun), secrets masked; id "<taskRunId>/<attempt>/<status>".
	TypeStatusTaskRun = "io.baton.event.status.taskrun"
)
