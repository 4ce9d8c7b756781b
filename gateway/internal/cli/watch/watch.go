// Package watch shows a run live: its DAG, each task's status and time, what each waiting
// gate waits for, and the run's status and elapsed time. On a terminal the view is redrawn
// in place (plain ANSI: cursor up, erase below), coloured unless NO_COLOR is set, and the
// clocks tick every second; elsewhere (a pipe, a file, CI logs) it writes one line per
// change instead. The run's states come from a Source; the command's exit code is the run's
// outcome (ExitCode).
package watch

import (
	"context"
	"errors"
	"time"
)

// Run is what the view shows of a run.
type Run struct {
	ID            string
	Workflow      string
	Version       int
	Status        string
	Phase         string
	StatusMessage string
	Start         time.Time
	// Duration is the run's length once it has ended.
	Duration time.Duration
	Tasks    []Task
}

// Task is what the view shows of one of a run's tasks.
type Task struct {
	Name         string
	Type         string
	Status       string
	Dependencies []string
	Start        time.Time
	Duration     time.Duration
	Message      string
	// Params are the task's parameters, from which a gate's wait is told (an event wait's
	// topic, a lock's key, a sleep's duration).
	Params map[string]string
	// Approvers are who may answer an approval or manual action, when the source knows.
	Approvers []string
}

// Source gives a run's states: it calls each with the run as it is now, then again each
// time it changes, and returns once the run has ended (nil) or it cannot go on.
type Source interface {
	Watch(ctx context.Context, team, runID string, each func(Run) error) error
}

// Exit codes of a watched run's command.
const (
	ExitSucceeded = 0
	// ExitError is a command that could not do its work (the run's outcome unknown).
	ExitError     = 1
	ExitFailed    = 3
	ExitCancelled = 4
	ExitTimedOut  = 5
)

// ExitCode is the exit code for a run that ended with status: 0 succeeded (skipped too, as
// a run whose work was not needed), 3 failed or invalid, 4 cancelled, 5 timed out; a run
// not ended is ExitError.
func ExitCode(status string) int {
	switch status {
	case "succeeded", "skipped":
		return ExitSucceeded
	case "failed", "invalid":
		return ExitFailed
	case "cancelled":
		return ExitCancelled
	case "timedout":
		return ExitTimedOut
	}
	return ExitError
}

// Ended reports whether a run of status has ended.
func Ended(status string) bool {
	switch status {
	case "succeeded", "skipped", "failed", "invalid", "cancelled", "timedout":
		return true
	}
	return false
}

// ErrNotEnded is returned when the source stops before the run has ended.
var ErrNotEnded = errors.New("the run's updates stopped before it ended")

// Follow shows the states of team's run runID from src on v until the run ends, and returns
// its last state.
func Follow(ctx context.Context, src Source, team, runID string, v *View) (Run, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	states := make(chan Run)
	done := make(chan error, 1)
	go func() {
		done <- src.Watch(ctx, team, runID, func(r Run) error {
			select {
			case states <- r:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	var tick <-chan time.Time
	if v.TTY {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		tick = t.C
	}
	var last Run
	seen := false
	for {
		select {
		case r := <-states:
			last, seen = r, true
			if err := v.Show(r); err != nil {
				return last, err
			}
		case <-tick:
			if seen {
				if err := v.Show(last); err != nil {
					return last, err
				}
			}
		case err := <-done:
			// Updates sent before the source returned were taken already: states is
			// unbuffered and each waits for this loop.
			if err != nil {
				return last, err
			}
			if !seen || !Ended(last.Status) {
				return last, ErrNotEnded
			}
			return last, v.End(last)
		case <-ctx.Done():
			return last, ctx.Err()
		}
	}
}
