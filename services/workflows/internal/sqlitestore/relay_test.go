package sqlitestore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/outbox"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// publisher records what it publishes, failing while fail is set.
type publisher struct {
	mu   sync.Mutex
	ids  []string
	fail bool
}

func (p *publisher) Publish(_ context.Context, topic, key string, e event.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail {
		return errors.New("broker down")
	}
	p.ids = append(p.ids, topic+"/"+key+"/"+e.ID())
	return nil
}

func (p *publisher) published() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.ids...)
}

// The events a change owes are stored with it and published in the order they were
// stored, each once the broker takes it; those the broker refused stay for a later sweep,
// and a team's deletion drops what its workflows still owed.
func TestRelayPublishesOwedEventsInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _, _ := newStore(t)
	pub := &publisher{fail: true}
	relay := s.Relay(pub, time.Hour, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ns := domain.Namespace{Team: "infra", TeamID: "id-infra"}
	gone := domain.Namespace{Team: "gone", TeamID: "id-gone"}
	change := func(ns domain.Namespace, name string) {
		_, err := s.UpdateCatalog(ctx, ns, func(next *domain.Catalog) ([]outbox.Entry, error) {
			next.Put(domain.Entry{Name: name, Latest: 1, Status: "active", CreationDate: time.Now()})
			e, err := events.New(fmt.Sprintf("%s-%d", name, next.Seq), events.Source("workflows"), "workflow.saved", "/"+name, map[string]string{})
			require.NoError(t, err)
			entry, err := outbox.NewEntry(events.WorkflowEvents, ns.Team, e)
			require.NoError(t, err)
			return []outbox.Entry{entry}, nil
		})
		require.NoError(t, err)
	}
	for _, name := range []string{"a", "b", "c"} {
		change(ns, name)
	}
	change(gone, "x")
	require.NoError(t, s.DeleteNamespace(ctx, gone))

	require.Error(t, relay.Sweep(ctx), "the broker is down")
	assert.Empty(t, pub.published())

	pub.mu.Lock()
	pub.fail = false
	pub.mu.Unlock()
	require.NoError(t, relay.Sweep(ctx))
	want := []string{events.WorkflowEvents + "/infra/a-1", events.WorkflowEvents + "/infra/b-2", events.WorkflowEvents + "/infra/c-3"}
	assert.Equal(t, want, pub.published())
	require.NoError(t, relay.Sweep(ctx))
	assert.Equal(t, want, pub.published(), "each is published once")
}
