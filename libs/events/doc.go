// Package events is the contract services share over Kafka: topic names, CloudEvent types,
// payloads, and the envelope. Every message is a CloudEvent 1.0 in structured JSON mode (the
// whole event is the Kafka message's value, `traceparent` travels in its headers) whose id
// is stable, so a consumer can drop a duplicate by it. Golden fixtures under testdata pin
// the wire form of every type in AllTypes, one testdata/<type>.json each at least.
//
// # What travels where
//
// Topic names are written without their prefix (BATON_KAFKA_TOPIC_PREFIX, default "baton.");
// Topic adds it. A message's Kafka key keeps the messages that must stay in order on one
// partition.
//
//	topic            CloudEvent type        data             key                producer
//	team.events      TypeTeamCreated        TeamCreated      team name          identity
//	                 TypeTeamDeleted        TeamDeleted      team name          identity
//	workflow.events  TypeWorkflowSaved      WorkflowSaved    <team>/<workflow>  workflows
//	                 TypeWorkflowDeleted    WorkflowDeleted  <team>/<workflow>  workflows
//	run.requests     TypeRunRequested       RunRequest       idempotency key    (schedules, chat)
//	run.events       TypeStatusWorkflowRun  WorkflowRun      run id             runs
//	                 TypeStatusTaskRun      TaskRun          run id             runs
//	                 TypeStatusAction       Action           run id             runs
//	task.dispatch    TypeTaskDispatch       TaskAttempt      run id             runs
//	queue.<q>        TypeTaskDispatch       TaskAttempt      run id             runs
//	task.updates     TypeTaskUpdate         TaskUpdate       run id             runner, workers
//	run.events.recorded TypeStatusRecorded  StatusRecorded   run id             integrations
//	<topic>.dlq      as on <topic>          as on <topic>    as on <topic>      kafkax.Consumer
//
// Who consumes them:
//
//   - team.events: workflows (both types: its copy of the teams), tasks and runs (deleted:
//     they delete the team's tasks and runs).
//   - workflow.events: nobody yet. Schedules are to follow trigger changes and archive a
//     deleted workflow's schedules, identity to revoke its workflow tokens.
//   - run.requests: nobody yet, and nothing publishes it: schedules (fires) and integrations
//     (chat commands) are to publish, the runs service to consume.
//   - run.events: integrations, which delivers them, in order per run, to the HTTP sinks
//     of settings (API.md §7), and says which it recorded (run.events.recorded).
//   - task.dispatch: runners, which execute the attempt.
//   - queue.<q> (QueueTopic): the attempts of `generic` tasks of queue q, for the workers of
//     that queue outside Baton that read Kafka (workers over HTTP claim them through the
//     gateway instead). Not in AllTopics: the producer creates it on first use.
//   - task.updates: the runs service. Runners, and the workers of `generic` tasks, report
//     an attempt's log in chunks (UpdateLog) and its end (UpdateEnded) with status, exit
//     code and results.
//   - run.events.recorded: every runs replica, each in a consumer group of its own. The
//     runs service keeps each of a run's status events (numbered by SeqExtension) with
//     the run until integrations says it is recorded, and sends it again until then.
//   - <topic>.dlq (DeadLetter): nobody; they are for operators to inspect. A kafkax
//     consumer copies there, with its key, value and headers plus the dlq_* headers of
//     kafkax, a message its handler still failed after its retries. Every topic of
//     AllTopics has one.
//
// Claims and heartbeats do not travel on Kafka: a runner claims an attempt and beats for it
// over HTTP on the runs service (POST /internal/v1/taskruns/{id}/claim and
// /internal/v1/taskruns/{id}/heartbeat), because it needs the answer (claimed or not;
// cancel or go on). Neither has a CloudEvent type.
package events
