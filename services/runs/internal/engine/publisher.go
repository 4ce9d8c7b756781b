package engine

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// publisher sends the events steps owe, in the order steps made them, in batches, and
// calls each batch's done once the broker has everything up to it. Steps do not wait for
// the broker: a crash before a publish loses only events a takeover derives again.
type publisher struct {
	pub  Publisher
	log  *slog.Logger
	mu   sync.Mutex
	wake chan struct{}
	q    []pending
}

type pending struct {
	msgs []Message
	done func()
}

func newPublisher(p Publisher, log *slog.Logger) *publisher {
	return &publisher{pub: p, log: log, wake: make(chan struct{}, 1)}
}

func (p *publisher) enqueue(msgs []Message, done func()) {
	if len(msgs) == 0 && done == nil {
		return
	}
	p.mu.Lock()
	p.q = append(p.q, pending{msgs: msgs, done: done})
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// run publishes until ctx ends, then makes one last attempt to drain the queue.
func (p *publisher) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			drain, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			p.flush(drain)
			cancel()
			return
		case <-p.wake:
		}
		p.flush(ctx)
	}
}

func (p *publisher) flush(ctx context.Context) {
	for {
		p.mu.Lock()
		batch := p.q
		p.q = nil
		p.mu.Unlock()
		if len(batch) == 0 {
			return
		}
		// Every topic in one publish, in the order the steps made them: a dispatch waits
		// for no status event's acknowledgement. A failure sends them all again; consumers
		// drop what they had by event id.
		var msgs []Message
		for _, b := range batch {
			msgs = append(msgs, b.msgs...)
		}
		for wait := 50 * time.Millisecond; len(msgs) > 0; wait = min(wait*2, 5*time.Second) {
			err := p.pub.Publish(ctx, msgs)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return
			}
			p.log.Warn("publish failed; retrying", "messages", len(msgs), "error", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		for _, b := range batch {
			if b.done != nil {
				b.done()
			}
		}
	}
}
