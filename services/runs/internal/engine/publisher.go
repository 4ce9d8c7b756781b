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
		// One topic at a time, in the order the steps made them, each retried alone.
		byTopic := map[string][]Message{}
		var order []string
		for _, b := range batch {
			for _, m := range b.msgs {
				if _, ok := byTopic[m.Topic]; !ok {
					order = append(order, m.Topic)
				}
				byTopic[m.Topic] = append(byTopic[m.Topic], m)
			}
		}
		for _, topic := range order {
			for wait := 50 * time.Millisecond; ; wait = min(wait*2, 5*time.Second) {
				err := p.pub.Publish(ctx, byTopic[topic])
				if err == nil {
					break
				}
				if ctx.Err() != nil {
					return
				}
				p.log.Warn("publish failed; retrying", "topic", topic, "error", err)
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
		}
		for _, b := range batch {
			if b.done != nil {
				b.done()
			}
		}
	}
}
