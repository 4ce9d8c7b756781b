package events

import (
	"fmt"
	"strconv"

	"github.com/cloudevents/sdk-go/v2/event"
)

// SeqExtension is the CloudEvent extension attribute that numbers a run's status events
// (TypeStatusWorkflowRun, TypeStatusTaskRun): 1, 2, 3… in the order the runs service
// stored the changes they report. A re-sent event keeps its number, as it keeps its id.
const SeqExtension = "runseq"

// SetSeq numbers e as the seq-th status event of its run.
func SetSeq(e *event.Event, seq int64) {
	e.SetExtension(SeqExtension, strconv.FormatInt(seq, 10))
}

// SeqOf answers e's number among its run's status events, false when it has none.
func SeqOf(e event.Event) (int64, bool) {
	v, ok := e.Extensions()[SeqExtension]
	if !ok {
		return 0, false
	}
	seq, err := strconv.ParseInt(fmt.Sprint(v), 10, 64)
	if err != nil || seq <= 0 {
		return 0, false
	}
	return seq, true
}

// TypeStatusRecorded says that a run's status events, up to a number (SeqExtension), are
// recorded for delivery: published by the integrations service on RunEventsRecorded keyed
// by run id, once the events are in its delivery queues (or there was no sink to queue
// them for). The runs service keeps what a run's events owe until it hears so, and sends
// them again otherwise. Data is StatusRecorded; id "<runId>/recorded/<seq>".
const TypeStatusRecorded = "io.baton.event.status.recorded"

// StatusRecorded is the data of TypeStatusRecorded: every status event of run Run
// numbered Seq or below was recorded.
type StatusRecorded struct {
	Run string `json:"run"`
	Seq int64  `json:"seq"`
}

// NewStatusRecorded builds the TypeStatusRecorded event of run's events up to seq.
func NewStatusRecorded(run string, seq int64) (event.Event, error) {
	return New(run+"/recorded/"+strconv.FormatInt(seq, 10), Source("integrations"), TypeStatusRecorded, "",
		StatusRecorded{Run: run, Seq: seq})
}
