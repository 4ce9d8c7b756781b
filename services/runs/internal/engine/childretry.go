package engine

import (
	"context"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
)

// childStartPauses are the pauses between the tries of a child run's start that a service
// it needs refused as unavailable for a moment (identity or workflows restarting): about
// half a minute in all, after which the task fails as before. The start carries its
// idempotency key, so a try that was carried out before its answer was lost makes no
// second child.
var childStartPauses = []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second,
	2 * time.Second, 4 * time.Second, 8 * time.Second, 15 * time.Second}

// startRetrying calls start until it succeeds, fails other than as unavailable, pauses
// run out or ctx ends; it answers the last try's result.
func startRetrying(ctx context.Context, pauses []time.Duration, start func() (string, error)) (string, error) {
	child, err := start()
	for _, d := range pauses {
		if err == nil || apperr.KindOf(err) != apperr.KindUnavailable {
			break
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return child, err
		case <-t.C:
		}
		child, err = start()
	}
	return child, err
}
