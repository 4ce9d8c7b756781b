package worker

import (
	"context"
	"errors"
	"time"

	"github.com/baton-flow/baton/libs/client"
)

// endGrace is how long a worker whose Run's context ended still tries to end the attempts
// it finished: a shutdown finishes what it started.
const endGrace = 30 * time.Second

// deliver ends the attempt with end, trying again while Baton does not take it, and beats
// for the attempt all the while: an end that cannot get through (Baton unavailable, or
// slow under load) must not leave the attempt silent, for its lease would give the task to
// another attempt and the work would be done twice. It stops once the end is taken, once
// Baton says the attempt is not the worker's (409, 404), once the lease lapses without a
// beat getting through (the attempt is Baton's to retry), or endGrace after Run's context
// ends.
//
// The first try, while the worker goes on, also claims the slot's next attempt in the
// same call, which deliver answers (nil when none waited or none was asked for). Only the
// first: one sent again after a lost answer would claim another attempt while the first
// waits for its lease.
func (t *Task) deliver(parent context.Context, name string, end *client.AttemptEnd) *client.WorkerAttempt {
	// ctx bounds the calls; leased ends too when the attempt is lost. A beat refused while
	// an end is under way may be the end taken: the call is let finish (it may bring the
	// next attempt), and only the next try is given up.
	ctx, stop := context.WithCancelCause(context.WithoutCancel(parent))
	defer stop(nil)
	defer context.AfterFunc(parent, func() { time.AfterFunc(endGrace, func() { stop(errStopped) }) })()
	leased, lose := context.WithCancelCause(ctx)
	defer lose(nil)
	beats := make(chan struct{})
	go func() {
		defer close(beats)
		t.keepLease(leased, lose)
	}()
	defer func() {
		lose(errDone)
		<-beats
	}()
	for try := 0; ; try++ {
		next, err := t.end(ctx, end, try == 0 && parent.Err() == nil)
		switch {
		case err == nil:
			return next
		case client.IsConflict(err) || client.IsNotFound(err):
			t.w.log.Warn("cannot end an attempt: it is not this worker's any more", "worker", name, "attempt", t.ID, "error", err)
			return nil
		}
		wait := min(time.Duration(try+1)*200*time.Millisecond, 5*time.Second)
		t.w.log.Warn("cannot end an attempt; trying again, beating for it meanwhile", "worker", name, "attempt", t.ID, "in", wait, "error", err)
		if !sleep(leased, wait) {
			if errors.Is(context.Cause(leased), errLost) {
				t.w.log.Warn("lost an attempt while ending it: its lease lapsed", "worker", name, "attempt", t.ID)
			} else {
				t.w.log.Warn("gave up ending an attempt as the worker stops", "worker", name, "attempt", t.ID)
			}
			return nil
		}
	}
}

// callWithin bounds one call ending an attempt, beyond the wait of a claim made with it.
const callWithin = 30 * time.Second

// end sends the attempt's end once, claiming the next attempt with it when claim is set.
func (t *Task) end(ctx context.Context, end *client.AttemptEnd, claim bool) (*client.WorkerAttempt, error) {
	if !claim {
		ctx, cancel := context.WithTimeout(ctx, callWithin)
		defer cancel()
		return nil, t.w.c.EndAttempt(ctx, t.w.team, t.w.queue, t.ID, end)
	}
	ctx, cancel := context.WithTimeout(ctx, t.w.wait+callWithin)
	defer cancel()
	req := *end
	req.WaitSeconds = int(t.w.wait / time.Second)
	return t.w.c.EndAttemptAndClaim(ctx, t.w.team, t.w.queue, t.ID, &req)
}

// keepLease beats for an attempt whose end is being delivered, until ctx ends; it ends
// ctx (lose) when the attempt is not the worker's any more or its lease lapsed.
func (t *Task) keepLease(ctx context.Context, lose context.CancelCauseFunc) {
	every := time.Duration(max(1, t.HeartbeatSeconds)) * time.Second
	lease := time.Duration(max(t.LeaseSeconds, t.HeartbeatSeconds)) * time.Second
	lastBeat := time.Now()
	for sleep(ctx, every) {
		_, err := t.w.c.HeartbeatAttempt(ctx, t.w.team, t.w.queue, t.ID, &client.WorkerRequest{Worker: t.worker})
		switch {
		case err == nil:
			// A cancel asked now changes nothing: the attempt is over, its end on its way.
			lastBeat = time.Now()
		case client.IsConflict(err) || client.IsNotFound(err):
			lose(errLost)
			return
		case ctx.Err() == nil && time.Since(lastBeat) > lease:
			lose(errLost)
			return
		}
	}
}
