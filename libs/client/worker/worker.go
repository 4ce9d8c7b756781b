// Package worker serves `generic` tasks over HTTP: a worker of one queue of one team
// claims its attempts through Baton's gateway, runs a handler for each, beats for it while
// it runs, sends what it logs, and ends it with the handler's results or error.
//
//	c, _ := client.New("https://baton.example.com", client.WithToken(token))
//	err := worker.New(c, "infra", "deploy").
//		Handle(func(ctx context.Context, t *worker.Task) (map[string]string, error) {
//			t.Logf("deploying %s", t.Param("version"))
//			return map[string]string{"url": "https://…"}, nil
//		}).
//		Run(ctx)
//
// The token needs the right to work the queue: `queue:deploy/action` (that queue alone),
// `queue/action`, or a team editor's. Each attempt goes to one worker (the claim is
// exactly-once). The handler's context ends when the attempt is cancelled or times out
// (the worker's beat hears it), when the worker loses the attempt (it could not beat
// within the lease), or when Run's context ends. A cancelled attempt ends cancelled, a lost
// or timed-out one is Baton's already, and one stopped by Run's end, like one whose
// handler answered an error or panicked, ends failed and is retried as the task's retries
// allow. An end Baton does not take at once is sent again, the worker beating for the
// attempt meanwhile, until it is taken or the attempt is lost: a slow Baton does not make
// the task run twice.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/client"
)

// Handler does one attempt and answers its results.
type Handler func(ctx context.Context, t *Task) (map[string]string, error)

// Worker serves one queue of one team. Configure it, then Run it.
type Worker struct {
	c           *client.Client
	team, queue string
	handler     Handler
	concurrency int
	name        string
	wait        time.Duration
	log         *slog.Logger
}

// New makes a worker of queue of team on c, running one attempt at a time, named after
// its host and process.
func New(c *client.Client, team, queue string) *Worker {
	host, _ := os.Hostname()
	return &Worker{c: c, team: team, queue: queue, concurrency: 1, wait: 10 * time.Second,
		name: host + "-" + strconv.Itoa(os.Getpid()), log: slog.New(slog.DiscardHandler)}
}

// Handle sets the handler of every attempt.
func (w *Worker) Handle(h Handler) *Worker { w.handler = h; return w }

// Concurrency sets how many attempts the worker runs at once (at least 1).
func (w *Worker) Concurrency(n int) *Worker { w.concurrency = max(1, n); return w }

// Name sets the worker's name, which Baton records as the runner of what it claims; each
// concurrent slot adds "/<slot>".
func (w *Worker) Name(name string) *Worker { w.name = name; return w }

// Wait sets how long one claim waits for an attempt (10 s by default, at most 60 s): how
// long Run may take to return once its context ends, since a claim under way is let
// finish, and what it brings given back.
func (w *Worker) Wait(d time.Duration) *Worker {
	w.wait = min(max(d, time.Second), 60*time.Second)
	return w
}

// Logger sets where the worker says what it does (nothing by default).
func (w *Worker) Logger(l *slog.Logger) *Worker { w.log = l; return w }

// Run claims and runs attempts until ctx ends, then waits for those running. It answers
// an error only when working the queue cannot go on: no handler, or credentials refused.
func (w *Worker) Run(ctx context.Context) error {
	if w.handler == nil {
		return errors.New("worker: no handler (Handle)")
	}
	var wg sync.WaitGroup
	errs := make(chan error, w.concurrency)
	for slot := range w.concurrency {
		wg.Go(func() {
			if err := w.serve(ctx, w.name+"/"+strconv.Itoa(slot)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	return errors.Join(func() []error {
		var out []error
		for err := range errs {
			out = append(out, err)
		}
		return out
	}()...)
}

// serve is one slot: claim, run, repeat.
func (w *Worker) serve(ctx context.Context, name string) error {
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		a, err := w.claim(ctx, name)
		switch {
		case a != nil && ctx.Err() != nil:
			w.release(ctx, name, a)
			return nil
		case ctx.Err() != nil:
			return nil
		case client.IsUnauthorized(err) || client.IsForbidden(err):
			return fmt.Errorf("worker %s: cannot work queue %s of team %s: %w", name, w.queue, w.team, err)
		case err != nil:
			backoff = min(max(2*backoff, 250*time.Millisecond), 30*time.Second)
			w.log.Warn("cannot claim an attempt; trying again", "worker", name, "in", backoff, "error", err)
			if !sleep(ctx, backoff) {
				return nil
			}
			continue
		}
		backoff = 0
		for a != nil {
			if ctx.Err() != nil {
				w.release(ctx, name, a)
				return nil
			}
			a = w.run(ctx, name, a)
		}
	}
	return nil
}

// release gives back attempt a, claimed as the worker stops, for another worker, as no
// try.
func (w *Worker) release(ctx context.Context, name string, a *client.WorkerAttempt) {
	release, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := w.c.ReleaseAttempt(release, w.team, w.queue, a.ID, &client.WorkerRequest{Worker: name}); err != nil {
		w.log.Warn("cannot give an attempt back; it waits for its lease", "worker", name, "attempt", a.ID, "error", err)
	} else {
		w.log.Info("gave an attempt back, claimed as the worker stopped", "worker", name, "attempt", a.ID)
	}
}

// claim asks for an attempt, waiting up to the worker's wait. The claim is not cut short
// when ctx ends: Baton may be claiming an attempt for it at that moment, which the worker
// then gives back rather than leave it to its lease.
func (w *Worker) claim(ctx context.Context, name string) (*client.WorkerAttempt, error) {
	asked, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.wait+30*time.Second)
	defer cancel()
	return w.c.ClaimQueuedAttempt(asked, w.team, w.queue, &client.ClaimRequest{Worker: name, WaitSeconds: int(w.wait / time.Second)})
}

// run does attempt a and ends it, claiming the slot's next attempt in the same call while
// the worker goes on: that attempt, or nil when none waited.
func (w *Worker) run(parent context.Context, name string, a *client.WorkerAttempt) *client.WorkerAttempt {
	ctx, stop := context.WithCancelCause(context.WithoutCancel(parent))
	defer stop(nil)
	if a.Deadline != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, *a.Deadline)
		defer cancel()
	}
	t := &Task{WorkerAttempt: a, w: w, worker: name}
	beats := make(chan struct{})
	go func() {
		defer close(beats)
		t.beat(ctx, parent, stop)
	}()
	results, err := t.call(ctx)
	t.flush(context.WithoutCancel(ctx))
	stop(errDone)
	<-beats

	end := &client.AttemptEnd{Worker: name, Status: "succeeded", Results: results}
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errLost):
		w.log.Warn("lost an attempt: its lease lapsed", "worker", name, "attempt", a.ID)
		return nil
	case errors.Is(cause, context.DeadlineExceeded):
		// Baton timed the attempt out itself.
		return nil
	case errors.Is(cause, errCancelled):
		end = &client.AttemptEnd{Worker: name, Status: "cancelled", Message: "cancelled"}
	case errors.Is(cause, errStopped):
		end = &client.AttemptEnd{Worker: name, Status: "failed", Message: "the worker stopped before the attempt ended"}
	case err != nil:
		end = &client.AttemptEnd{Worker: name, Status: "failed", Message: err.Error()}
	}
	return t.deliver(parent, name, end)
}

var (
	errDone      = errors.New("attempt done")
	errLost      = errors.New("attempt lost: its lease lapsed")
	errCancelled = errors.New("attempt cancelled")
	errStopped   = errors.New("the worker stopped")
)

// Task is an attempt being worked: the attempt as claimed, its params, and its log.
type Task struct {
	*client.WorkerAttempt
	w      *Worker
	worker string

	mu  sync.Mutex
	buf strings.Builder
	seq int
}

// Param answers param name as text ("" when absent).
func (t *Task) Param(name string) string {
	v, ok := t.Params[name]
	if !ok || v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// Logf writes a line to the attempt's log (readable, and followed, at
// /api/v2/taskrun/{taskRunId}/log), the attempt's secrets masked.
func (t *Task) Logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	for _, s := range t.Secrets {
		if s != "" {
			line = strings.ReplaceAll(line, s, "********")
		}
	}
	t.mu.Lock()
	t.buf.WriteString(line)
	if !strings.HasSuffix(line, "\n") {
		t.buf.WriteByte('\n')
	}
	t.mu.Unlock()
}

// flush sends what was logged since the last flush.
func (t *Task) flush(ctx context.Context) {
	t.mu.Lock()
	text := t.buf.String()
	t.buf.Reset()
	seq := t.seq
	if text != "" {
		t.seq++
	}
	t.mu.Unlock()
	if text == "" {
		return
	}
	if err := t.w.c.AppendAttemptLog(ctx, t.w.team, t.w.queue, t.ID, &client.AttemptLog{Worker: t.worker, Seq: seq, Text: text}); err != nil {
		t.w.log.Warn("cannot send the attempt's log", "worker", t.worker, "attempt", t.ID, "error", err)
	}
}

// call runs the handler, a panic being its error.
func (t *Task) call(ctx context.Context) (results map[string]string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the handler panicked: %v", r)
		}
	}()
	return t.w.handler(ctx, t)
}

// beat beats for the attempt and sends its log until ctx ends: it stops the attempt
// (stop) when Baton says to cancel it, when it is lost, or when Run's context (parent)
// ends.
func (t *Task) beat(ctx, parent context.Context, stop context.CancelCauseFunc) {
	every := time.Duration(max(1, t.HeartbeatSeconds)) * time.Second
	lease := time.Duration(max(t.LeaseSeconds, t.HeartbeatSeconds)) * time.Second
	lastBeat := time.Now()
	logs := time.NewTicker(250 * time.Millisecond)
	defer logs.Stop()
	next := time.NewTimer(every)
	defer next.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-parent.Done():
			stop(errStopped)
			return
		case <-logs.C:
			t.flush(ctx)
			continue
		case <-next.C:
		}
		ans, err := t.w.c.HeartbeatAttempt(ctx, t.w.team, t.w.queue, t.ID, &client.WorkerRequest{Worker: t.worker})
		switch {
		case err == nil && ans.Cancel:
			stop(errCancelled)
			return
		case err == nil:
			lastBeat = time.Now()
		case client.IsConflict(err) || client.IsNotFound(err):
			stop(errLost)
			return
		case time.Since(lastBeat) > lease:
			stop(errLost)
			return
		}
		next.Reset(every)
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
