package events

// DefaultTopicPrefix is the prefix every topic name gets unless configured otherwise.
const DefaultTopicPrefix = "baton."

// Topic names without their prefix; Topic adds it. The package documentation lists what
// travels on each.
const (
	// TeamEvents carries TypeTeamCreated and TypeTeamDeleted from identity, keyed by team
	// name; other services cascade on them.
	TeamEvents = "team.events"
	// WorkflowEvents carries TypeWorkflowSaved (which reports trigger changes too) and
	// TypeWorkflowDeleted from workflows, keyed by "<team>/<workflow>".
	WorkflowEvents = "workflow.events"
	// RunRequests carries TypeRunRequested, run requests from schedules and chat, keyed by
	// idempotency key.
	RunRequests = "run.requests"
	// RunEvents carries TypeStatusWorkflowRun and TypeStatusTaskRun, run and task-run
	// status changes from runs, keyed by run id.
	RunEvents = "run.events"
	// TaskDispatch carries TypeTaskDispatch, task-run attempts for runners, keyed by run id.
	// Attempts of `generic` tasks go to their queue's topic instead (QueueTopic).
	TaskDispatch = "task.dispatch"
	// TaskUpdates carries TypeTaskUpdate, runners' and workers' reports on attempts (log
	// chunks, then the end with results), keyed by run id. Claims and heartbeats are not
	// on it: they are HTTP calls on the runs service.
	TaskUpdates = "task.updates"
	// RunEventsRecorded carries TypeStatusRecorded from integrations to runs, keyed by run
	// id: which of a run's status events are recorded for delivery.
	RunEventsRecorded = "run.events.recorded"
)

// AllTopics lists every topic name (without prefix), for bootstrapping a cluster; each
// also has a dead-letter topic (DeadLetter). Queue topics (QueueTopic) are not listed: a
// queue's topic is created when an attempt is first published on it.
var AllTopics = []string{TeamEvents, WorkflowEvents, RunRequests, RunEvents, TaskDispatch, TaskUpdates, RunEventsRecorded}

// deadLetterSuffix is what DeadLetter appends to a topic name.
const deadLetterSuffix = ".dlq"

// Topic is the full name of topic name under prefix, e.g. Topic("baton.", TeamEvents) is
// "baton.team.events". The prefix is used as given (include the trailing dot).
func Topic(prefix, name string) string {
	return prefix + name
}

// DeadLetter is the name of the topic that receives the messages of topic that could not be
// handled, e.g. "baton.team.events.dlq".
func DeadLetter(topic string) string {
	return topic + deadLetterSuffix
}

// QueueTopic is the topic name (without prefix) the attempts of a `generic` task of queue q
// are published on, for the workers of that queue: "queue.<q>".
func QueueTopic(q string) string { return "queue." + q }
