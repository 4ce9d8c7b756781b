package events

// DefaultTopicPrefix is the prefix every topic name gets unless configured otherwise.
const DefaultTopicPrefix = "baton."

// Topic names without their prefix; Topic adds it.
const (
	// TeamEvents carries team created/deleted facts; other services cascade on them.
	TeamEvents = "team.events"
	// WorkflowEvents carries workflow saved/deleted and trigger changes.
	WorkflowEvents = "workflow.events"
	// RunRequests carries run requests from schedules and chat, keyed by idempotency key.
	RunRequests = "run.requests"
	// RunEvents carries run and task-run status changes.
	RunEvents = "run.events"
	// TaskDispatch carries task-run attempts for runners, keyed by run id.
	TaskDispatch = "task.dispatch"
	// TaskUpdates carries runner reports back to runs: started, heartbeat, logs, ended.
	TaskUpdates = "task.updates"
)

// AllTopics lists every topic name (without prefix), for bootstrapping a cluster.
var AllTopics = []string{TeamEvents, WorkflowEvents, RunRequests, RunEvents, TaskDispatch, TaskUpdates}

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
