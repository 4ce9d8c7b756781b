package domain

import (
	"strconv"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/tasktype"
)

// QueuedAttempt is an attempt of a `generic` task waiting in its team's queue for a worker
// to claim it over HTTP. It is written once the step that dispatched the attempt is stored
// (again whenever the run is loaded, so a crash in between loses none), and deleted once
// the attempt is claimed or has ended. The task run itself stays the truth: a claim is the
// task run's own (Machine.Claim), whatever the queue said.
type QueuedAttempt struct {
	// ID is AttemptID(TaskRun, Attempt).
	ID      string
	Team    string
	Queue   string
	Run     string
	TaskRun string
	Attempt int
	// At is when the attempt was dispatched: a queue is served oldest first.
	At time.Time
}

// AttemptID names attempt of task run taskRun: "<taskRunId>-<attempt>".
func AttemptID(taskRun string, attempt int) string {
	return taskRun + "-" + strconv.Itoa(attempt)
}

// ParseAttemptID reads an AttemptID into the run, the task's index and the attempt.
func ParseAttemptID(id string) (run string, task, attempt int, ok bool) {
	at := strings.LastIndexByte(id, '-')
	if at < 0 {
		return "", 0, 0, false
	}
	attempt, err := strconv.Atoi(id[at+1:])
	if err != nil || attempt < 1 {
		return "", 0, 0, false
	}
	run, task, ok = ParseTaskRunID(id[:at])
	return run, task, attempt, ok
}

// QueuedOf answers the queued attempt of task i of s, at now, and whether it is one: a
// `generic` task ready for its current attempt.
func (s *State) QueuedOf(i int, now time.Time) (QueuedAttempt, bool) {
	t := s.Tasks[i]
	if t.Type != tasktype.Generic || t.Status != Ready {
		return QueuedAttempt{}, false
	}
	return QueuedAttempt{ID: AttemptID(t.ID, t.Attempt), Team: s.Run.Team, Queue: Text(t.Params["queue"]),
		Run: s.Run.ID, TaskRun: t.ID, Attempt: t.Attempt, At: now}, true
}

// Release gives back attempt of task i, which runner claimed and has not begun (a worker
// stopping with a claim it cannot work): the attempt is ready again, dispatched anew, and
// counts as no try. False when the attempt is not runner's running one.
func (m *Machine) Release(i, attempt int, runner string) bool {
	t := m.S.Tasks[i]
	if t.Status != Running || t.Attempt != attempt || t.Runner != runner || m.S.Run.Phase.Ended() {
		return false
	}
	m.touch(i)
	t.Status, t.Runner = Ready, ""
	m.dispatch(i)
	return true
}
