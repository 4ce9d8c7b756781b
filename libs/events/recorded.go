package events

import (
	"fmt"
	"strconv"
	"strings"

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

// TypeStatusRecorded says which of a run's status events are recorded for delivery, by
// their numbers (SeqExtension): published by the integrations service on
// RunEventsRecorded keyed by run id, once the events are in its delivery queues (or there
// was no sink to queue them for). The runs service keeps a run's events until it hears
// so of each, and sends them again otherwise. Each event is named by its own number: a
// run's events may reach the broker out of their order (two replicas each publish what
// they stored), so a number says nothing of the ones before it. Data is StatusRecorded;
// id "<runId>/recorded/<seq>,<seq>…".
const TypeStatusRecorded = "io.baton.event.status.recorded"

// StatusRecorded is the data of TypeStatusRecorded: the status events of run Run numbered
// Seqs are recorded.
type StatusRecorded struct {
	Run  string  `json:"run"`
	Seqs []int64 `json:"seqs"`
}

// NewStatusRecorded builds the TypeStatusRecorded event of run's events numbered seqs.
func NewStatusRecorded(run string, seqs []int64) (event.Event, error) {
	parts := make([]string, len(seqs))
	for i, s := range seqs {
		parts[i] = strconv.FormatInt(s, 10)
	}
	return New(run+"/recorded/"+strings.Join(parts, ","), Source("integrations"), TypeStatusRecorded, "",
		StatusRecorded{Run: run, Seqs: seqs})
}
