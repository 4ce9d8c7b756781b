package worker_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/client"
	"github.com/baton-flow/baton/libs/client/worker"
)

// queue is a gateway's workers' endpoints for one attempt: claimed once, its end refused
// (503) until refuseEnds beats came after the handler returned, or refused for good
// (lose: 409 to every beat and end once the handler returned).
type queue struct {
	refuseEnds int
	lose       bool
	// next, when set, is answered to the end that claims, once a beat of the ended
	// attempt was refused (as Baton refuses one once the end is taken).
	next bool

	mu        sync.Mutex
	claimed   bool
	reclaims  int  // claims after the handler returned: the worker moved on
	done      bool // the handler returned
	beatsDone int  // beats after it returned
	endTries  int
	ended     string
	// claimedNext is set once the next attempt was answered with the end.
	claimedNext bool
}

func (q *queue) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case strings.HasSuffix(r.URL.Path, "/claim"):
		if q.claimed {
			if q.done {
				q.reclaims++
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		q.claimed = true
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(client.WorkerAttempt{ID: "a-1", TaskRunID: "r.1", Attempt: 1, HeartbeatSeconds: 1, LeaseSeconds: 60})
	case strings.HasSuffix(r.URL.Path, "/heartbeat"):
		if q.ended != "" && q.next {
			q.beatsDone++
			http.Error(w, `{"status":409,"message":"ended"}`, http.StatusConflict)
			return
		}
		if q.done {
			q.beatsDone++
			if q.lose {
				http.Error(w, `{"status":409,"message":"not yours"}`, http.StatusConflict)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"cancel":false}`))
	case strings.HasSuffix(r.URL.Path, "/end"):
		q.endTries++
		if q.lose || q.beatsDone < q.refuseEnds {
			http.Error(w, `{"status":503,"message":"unavailable"}`, http.StatusServiceUnavailable)
			return
		}
		var end client.AttemptEnd
		_ = json.NewDecoder(r.Body).Decode(&end)
		q.ended = end.Status
		if q.next && end.ClaimNext && !q.claimedNext {
			// The claim waits; a beat comes meanwhile and is refused.
			for q.beatsDone == 0 {
				q.mu.Unlock()
				select {
				case <-r.Context().Done():
					q.mu.Lock()
					return
				case <-time.After(10 * time.Millisecond):
				}
				q.mu.Lock()
			}
			q.claimedNext = true
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(client.WorkerAttempt{ID: "a-2", TaskRunID: "r.2", Attempt: 1, HeartbeatSeconds: 1, LeaseSeconds: 60})
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

func (q *queue) state() (beats, tries int, ended string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.beatsDone, q.endTries, q.ended
}

// A worker whose end Baton does not take at once tries it again and beats for the
// attempt meanwhile, so that the lease does not give the task to another attempt; it stops
// when Baton says the attempt is not its own.
func TestEndDeliveredUnderLease(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		give      *queue
		wantEnded string
	}{
		{"end refused while two beats go through, then taken", &queue{refuseEnds: 2}, "succeeded"},
		{"attempt lost meanwhile: the worker lets it go", &queue{lose: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tt.give)
			t.Cleanup(srv.Close)
			c, err := client.New(srv.URL, client.WithToken("t0k"))
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			stopped := make(chan struct{})
			w := worker.New(c, "infra", "deploy").Wait(time.Second).
				Handle(func(context.Context, *worker.Task) (map[string]string, error) {
					tt.give.mu.Lock()
					tt.give.done = true
					tt.give.mu.Unlock()
					return map[string]string{"ok": "yes"}, nil
				})
			go func() {
				defer close(stopped)
				_ = w.Run(ctx)
			}()
			t.Cleanup(func() { cancel(); <-stopped })

			if tt.wantEnded != "" {
				require.Eventually(t, func() bool { _, _, ended := tt.give.state(); return ended != "" }, 20*time.Second, 10*time.Millisecond)
				beats, tries, ended := tt.give.state()
				assert.Equal(t, tt.wantEnded, ended)
				assert.GreaterOrEqual(t, beats, 2, "beats went on while the end was refused")
				assert.Greater(t, tries, 1)
				return
			}
			// Lost: the worker stops trying the end (Baton keeps refusing it) once a beat
			// says so, and claims the next attempt.
			require.Eventually(t, func() bool {
				tt.give.mu.Lock()
				defer tt.give.mu.Unlock()
				return tt.give.reclaims > 0
			}, 20*time.Second, 10*time.Millisecond)
			beats, _, ended := tt.give.state()
			assert.Positive(t, beats)
			assert.Empty(t, ended)
		})
	}
}

// A beat refused while the end that claims the next attempt waits (Baton took the end,
// so the ended attempt is not the worker's any more) does not cut that call short: the
// next attempt it brings is worked.
func TestEndTakenWhileItsClaimWaits(t *testing.T) {
	t.Parallel()
	q := &queue{next: true}
	srv := httptest.NewServer(q)
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, client.WithToken("t0k"))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	var mu sync.Mutex
	var worked []string
	w := worker.New(c, "infra", "deploy").Wait(time.Second).
		Handle(func(_ context.Context, task *worker.Task) (map[string]string, error) {
			mu.Lock()
			worked = append(worked, task.ID)
			mu.Unlock()
			q.mu.Lock()
			q.done = true
			q.mu.Unlock()
			return nil, nil
		})
	go func() {
		defer close(stopped)
		_ = w.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-stopped })
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(worked) == 2
	}, 20*time.Second, 10*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"a-1", "a-2"}, worked)
}
