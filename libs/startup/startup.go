// Package startup bounds what a service does with its store (and its other dependencies)
// before it serves: connecting, migrations, index creation, seeds. A process started while
// its store is down, or so loaded that it does not answer, must neither hang (a call
// without a deadline waits for ever, and the process looks alive to its supervisor while
// it never becomes ready) nor give up at the first refusal (a store starting beside it
// answers a moment later). Each call gets a deadline of its own and is tried again, with
// a log line saying what waits and why, until a bound on the whole; past it the error is
// returned, for the process to exit non-zero and its supervisor (a container runtime,
// Kubernetes, the cluster command) to start it again.
//
// Everything it retries must be safe to do again: creating an index that exists, a seed
// that skips what is there, a ping.
package startup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Bounds of a step, unless Options say otherwise.
const (
	// TryWithin bounds one try: far above what a step takes on a store that answers.
	TryWithin = 30 * time.Second
	// Within bounds all the tries of a step.
	Within = 2 * time.Minute
)

// Options bound a step's tries; zero fields take the package's defaults.
type Options struct {
	// Try bounds one try (TryWithin).
	Try time.Duration
	// Within bounds the step, every try and pause included (Within).
	Within time.Duration
	// Pause is the first pause between two tries, doubled each time up to 5 s (1 s).
	Pause time.Duration
}

// Do runs fn, what the step does (for the log and the error), with the default bounds.
func Do(ctx context.Context, log *slog.Logger, what string, fn func(context.Context) error) error {
	return DoWith(ctx, log, Options{}, what, fn)
}

// DoWith runs fn, each try under its own deadline, until it succeeds, ctx ends, or
// opts.Within has passed; then it answers the last error, saying what failed and for how
// long. A failed try is logged at WARN with the pause before the next.
func DoWith(ctx context.Context, log *slog.Logger, opts Options, what string, fn func(context.Context) error) error {
	try, within, pause := opts.Try, opts.Within, opts.Pause
	if try <= 0 {
		try = TryWithin
	}
	if within <= 0 {
		within = Within
	}
	if pause <= 0 {
		pause = time.Second
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	bounded, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for n := 1; ; n++ {
		tryCtx, cancelTry := context.WithTimeout(bounded, try)
		err := fn(tryCtx)
		cancelTry()
		if err == nil {
			if n > 1 {
				log.Info("startup step done after retries", "step", what, "tries", n, "took", time.Since(start).Round(time.Millisecond))
			}
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", what, errors.Join(ctx.Err(), err))
		}
		if bounded.Err() != nil {
			return fmt.Errorf("%s: gave up after %d tries in %s: %w", what, n, time.Since(start).Round(time.Millisecond), err)
		}
		log.Warn("startup step failed; trying again", "step", what, "try", n, "in", pause, "error", err)
		t := time.NewTimer(pause)
		select {
		case <-bounded.Done():
			t.Stop()
			if ctx.Err() != nil {
				return fmt.Errorf("%s: %w", what, errors.Join(ctx.Err(), err))
			}
			return fmt.Errorf("%s: gave up after %d tries in %s: %w", what, n, time.Since(start).Round(time.Millisecond), err)
		case <-t.C:
		}
		pause = min(2*pause, 5*time.Second)
	}
}
