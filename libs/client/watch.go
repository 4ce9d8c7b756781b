package client

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"reflect"
	"time"
)

// transientTries is how many failed reads in a row Watch waits through (a 429, a 503, a
// network error) before it gives up with the last error.
const transientTries = 5

// Watch yields the run (with its task runs) when first read, then each time it changes,
// until it ends: the last run yielded is the ended one (phase completed or finalized).
// Runs are team-scoped in the API, hence team.
//
// How it learns of changes: it follows the run's stream (WatchWorkflowRun), which the
// server sends a new state on as soon as the run or one of its task runs changes. A
// stream cut short (the server shutting down, the connection lost) is opened again,
// with Last-Event-ID, and goes on from the run's current state. Only a server without
// the stream (one that answers its route not found) is read every poll interval instead
// (WithPollInterval, one second by default); then changes between two reads are seen
// together, and a state that lasted less than the interval may not be seen at all.
// Either way a run is yielded when the run's or a task run's status, phase, status
// message, results, attempt or awaitingApproval changed, or a task run was added.
//
// A read or an opening refused for a while (429 with Retry-After, 503, a network error),
// or a stream cut short, is tried again, up to 5 times in a row; any other error, or the
// end of ctx, is yielded and ends the sequence. Breaking out of the loop stops the watch.
func (c *Client) Watch(ctx context.Context, team, runID string) iter.Seq2[*WorkflowRun, error] {
	return func(yield func(*WorkflowRun, error) bool) {
		var last *runState
		changed := func(run *WorkflowRun, err error) bool {
			if err != nil {
				return yield(nil, err)
			}
			state := stateOf(run)
			if last != nil && reflect.DeepEqual(*last, state) && !run.Ended() {
				return true
			}
			last = &state
			return yield(run, nil)
		}
		if c.followRun(ctx, team, runID, changed) {
			return
		}
		c.pollRun(ctx, team, runID, changed)
	}
}

// pollRun reads the run every poll interval, yielding each read, until it ends.
func (c *Client) pollRun(ctx context.Context, team, runID string, yield func(*WorkflowRun, error) bool) {
	failures := 0
	for {
		run, err := c.GetWorkflowRun(ctx, team, runID)
		wait := c.poll
		switch {
		case err == nil:
			failures = 0
			if !yield(run, nil) || run.Ended() {
				return
			}
		case ctx.Err() != nil:
			yield(nil, ctx.Err())
			return
		case transient(err) && failures < transientTries:
			failures++
			if e, ok := AsError(err); ok && e.RetryAfter > wait {
				wait = e.RetryAfter
			}
		default:
			yield(nil, err)
			return
		}
		if !sleep(ctx, wait) {
			yield(nil, ctx.Err())
			return
		}
	}
}

// sleep waits d, false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// transient reports whether err may pass by itself: a rate limit, a dependency down, or
// no answer at all.
func transient(err error) bool {
	if e, ok := AsError(err); ok {
		return e.StatusCode == http.StatusTooManyRequests || e.StatusCode == http.StatusServiceUnavailable ||
			e.StatusCode == http.StatusBadGateway || e.StatusCode == http.StatusGatewayTimeout
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// runState is what of a run Watch compares: not its duration, which grows at each read.
type runState struct {
	Status, Phase, Message string
	AwaitingApproval       bool
	Results                []NameValue
	Tasks                  []taskState
}

type taskState struct {
	ID, Status, Phase, Message string
	Attempt                    int64
	Results                    []NameValue
}

func stateOf(r *WorkflowRun) runState {
	s := runState{Status: r.Status, Phase: r.Phase, Message: r.StatusMessage,
		AwaitingApproval: r.AwaitingApproval, Results: r.Results}
	for _, t := range r.Tasks {
		s.Tasks = append(s.Tasks, taskState{ID: t.ID, Status: t.Status, Phase: t.Phase,
			Message: t.StatusMessage, Attempt: t.Attempt, Results: t.Results})
	}
	return s
}

// WaitForRun waits for a run to end and answers it as it ended; it is Watch's last run.
// A run that ended without succeeding is not an error: look at its Status.
func (c *Client) WaitForRun(ctx context.Context, team, runID string) (*WorkflowRun, error) {
	for run, err := range c.Watch(ctx, team, runID) {
		if err != nil {
			return nil, err
		}
		if run.Ended() {
			return run, nil
		}
	}
	return nil, fmt.Errorf("client: run %s: the watch ended before the run", runID)
}

// SubmitAndWait submits a run of workflow in team (req may be nil), started at once when
// a concurrency slot is free, and waits for it to end. It answers the ended run: look at
// its Status (Succeeded tells). When ctx ends first it answers the error with the run as
// submitted, so the caller can name it or cancel it.
func (c *Client) SubmitAndWait(ctx context.Context, team, workflow string, req *WorkflowSubmitRequest) (*WorkflowRun, error) {
	run, err := c.SubmitWorkflow(ctx, team, workflow, req, true)
	if err != nil {
		return nil, err
	}
	if run.Ended() {
		return run, nil
	}
	ended, err := c.WaitForRun(ctx, team, run.ID)
	if err != nil {
		return run, fmt.Errorf("client: wait for run %s: %w", run.ID, err)
	}
	return ended, nil
}

// Succeeded reports whether the run ended with status succeeded.
func (r *WorkflowRun) Succeeded() bool { return r.Ended() && r.Status == StatusSucceeded }
