package crashtest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/services/integrations"
)

// sinkPaths are the HTTP sinks of the test's settings: two paths of one server, each its
// own sink to the integrations service.
var sinkPaths = []string{"/one", "/two"}

// sinks is the HTTP server standing for every sink: it keeps, per sink and run, the
// status events it was sent, in the order they came, duplicates included.
type sinks struct {
	srv *httptest.Server
	mu  sync.Mutex
	got map[string]map[string][]sunk
}

// sunk is a status event as a sink got it.
type sunk struct {
	id, typ string
	seq     int64
	hasSeq  bool
}

func newSinks(t *testing.T) *sinks {
	s := &sinks{got: map[string]map[string][]sunk{}}
	for _, p := range sinkPaths {
		s.got[p] = map[string][]sunk{}
	}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		e, err := events.Unmarshal(raw)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		run, _, _ := strings.Cut(strings.TrimPrefix(e.Subject(), "/workflowrun/"), "/")
		seq, ok := events.SeqOf(e)
		s.mu.Lock()
		if byRun, known := s.got[r.URL.Path]; known {
			byRun[run] = append(byRun[run], sunk{id: e.ID(), typ: e.Type(), seq: seq, hasSeq: ok})
		}
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// IntegrationSettings answers the sinks as the events.sinks setting.
func (s *sinks) IntegrationSettings(context.Context) (identityapi.IntegrationSettings, error) {
	var urls []string
	for _, p := range sinkPaths {
		urls = append(urls, s.srv.URL+p)
	}
	return identityapi.IntegrationSettings{Sinks: urls}, nil
}

// startIntegrations starts the integrations service, which records the runs' status
// events and delivers them to the sinks. It is not killed: what this test kills is the
// engine's processes, whose stored changes must reach the sinks all the same. Alone, as
// in standalone mode, it keeps its records in a SQLite file of its own; else in the
// shared MongoDB.
func (c *cluster) startIntegrations(s *sinks) {
	ctx, cancel := context.WithCancel(context.Background())
	var databaseURL string
	if c.alone {
		databaseURL = "sqlite:" + filepath.Join(c.t.TempDir(), "integrations.db")
	}
	svc, err := integrations.New(ctx, integrations.Config{GroupID: c.kafka.TopicPrefix + "integrations", SecretKey: secretKey, DatabaseURL: databaseURL},
		integrations.Deps{DB: c.db.Client().Database(c.db.Name() + "-integrations"), Kafka: c.kafka, Publisher: c.producer,
			Signer: c.signer, Resolver: c.static, Logger: c.log, Settings: s})
	require.NoError(c.t, err)
	done := make(chan struct{})
	go func() {
		_ = svc.Run(ctx)
		close(done)
	}()
	c.t.Cleanup(func() {
		cancel()
		<-done
	})
}

// finalEvent is the id of a run's last status event when it succeeded.
func finalEvent(run string) string { return run + "/succeeded/completed" }

// checkSinks waits until every sink got the final status event of every run, then checks
// that each got every event of each run: numbered 1, 2, 3… without a gap up to the final
// one, each first seen in that order (a sink drops what it saw by id, so what comes again
// later is harmless).
func (s *sinks) checkSinks(t *testing.T, ids []string) {
	t.Helper()
	missing := func() (n int, example string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, p := range sinkPaths {
			for _, id := range ids {
				if !s.saw(p, id, finalEvent(id)) {
					n, example = n+1, p+" "+id
				}
			}
		}
		return n, example
	}
	// What the sinks got so far, now and then: a slow delivery shows as such.
	progress := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		var total, unique int
		for _, p := range sinkPaths {
			for _, evs := range s.got[p] {
				seen := map[string]bool{}
				for _, e := range evs {
					total++
					if !seen[e.id] {
						seen[e.id] = true
						unique++
					}
				}
			}
		}
		t.Logf("sinks: %d events received, %d distinct", total, unique)
	}
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Second):
				progress()
			}
		}
	}()
	defer close(stop)
	progress()
	// A bound on delivery, far above what it takes (about two minutes here on a quiet
	// machine), not a speed goal.
	if !assert.Eventually(t, func() bool { n, _ := missing(); return n == 0 }, 10*time.Minute, 200*time.Millisecond) {
		n, example := missing()
		t.Errorf("%d final run events never reached their sink, e.g. %s", n, example)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var gaps, disorders int
	for _, p := range sinkPaths {
		for _, id := range ids {
			seen := map[string]bool{}
			var seqs []int64
			var final int64
			var arrived []string
			for _, e := range s.got[p][id] {
				arrived = append(arrived, fmt.Sprintf("%d:%s", e.seq, e.id))
				if seen[e.id] || e.typ == events.TypeStatusAction {
					continue
				}
				seen[e.id] = true
				if !assert.True(t, e.hasSeq, "%s: event %s of run %s has no number", p, e.id, id) {
					continue
				}
				seqs = append(seqs, e.seq)
				if e.id == finalEvent(id) {
					final = e.seq
				}
			}
			if !sort.SliceIsSorted(seqs, func(i, j int) bool { return seqs[i] < seqs[j] }) {
				disorders++
				t.Logf("%s: run %s's events came out of order: %v (as they came: %s)", p, id, seqs, strings.Join(arrived, " "))
			}
			sorted := append([]int64(nil), seqs...)
			sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
			for k, seq := range sorted {
				if seq != int64(k+1) {
					gaps++
					t.Logf("%s: run %s's events are not 1…%d: %v (as they came: %s)", p, id, len(sorted), sorted, strings.Join(arrived, " "))
					break
				}
			}
			if final != 0 && len(sorted) > 0 {
				assert.Equal(t, sorted[len(sorted)-1], final, "%s: run %s's last event is not its final status", p, id)
			}
		}
	}
	assert.Zero(t, gaps, "runs with status events missing at a sink")
	assert.Zero(t, disorders, "runs whose status events reached a sink out of order")
}

// saw reports whether sink p got event id of run. The caller holds s.mu.
func (s *sinks) saw(p, run, id string) bool {
	for _, e := range s.got[p][run] {
		if e.id == id {
			return true
		}
	}
	return false
}
