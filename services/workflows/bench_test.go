package workflows_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/outbox"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
	"github.com/baton-flow/baton/services/workflows/internal/mongostore"
)

// Benchmarks run the whole request path (Fiber handler, JSON, validation, FerretDB through
// testkit) with an in-process task resolver:
//
//	cd services/workflows && go test -run '^$' -bench . -benchtime 200x
//
// Targets (issue 4): save of a 500-task workflow under 50 ms, its read under 10 ms, a query
// in a team of 10,000 workflows under 20 ms.

// bigWorkflow is n template tasks in a chain, every tenth one a script reading the results
// of the task before it, so validation walks references as well as the graph.
func bigWorkflow(name string, n int) []byte {
	w := chain(name, n)
	tasks := w["tasks"].([]any)
	for i := 10; i <= n; i += 10 {
		t := tasks[i].(map[string]any)
		t["type"], t["taskRef"] = "script", nil
		delete(t, "taskRef")
		t["params"] = params("script", fmt.Sprintf("echo $(tasks.step-%d.results.status) $(params.branch)", i-1))
	}
	raw, _ := json.Marshal(w)
	return raw
}

func reportMillis(b *testing.B, start time.Time, n int) {
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(n), "ms/op")
}

func BenchmarkWorkflow500Tasks(b *testing.B) {
	f := newFixture(b, fixtureOptions{})
	body := bigWorkflow("big", 500)
	b.Logf("body: %d KB", len(body)/1024)
	f.must(b, http.StatusCreated, editor, http.MethodPost, base, body)

	b.Run("save new version", func(b *testing.B) {
		n, start := 0, time.Now()
		for b.Loop() {
			f.send(b, http.StatusOK, editor, http.MethodPut, base, body)
			n++
		}
		reportMillis(b, start, n)
	})
	b.Run("save replace", func(b *testing.B) {
		n, start := 0, time.Now()
		for b.Loop() {
			f.send(b, http.StatusOK, editor, http.MethodPut, base+"?replace=true", body)
			n++
		}
		reportMillis(b, start, n)
	})
	b.Run("read latest", func(b *testing.B) {
		n, start := 0, time.Now()
		for b.Loop() {
			f.send(b, http.StatusOK, reader, http.MethodGet, base+"/big", nil)
			n++
		}
		reportMillis(b, start, n)
	})
	b.Run("read canvas", func(b *testing.B) {
		n, start := 0, time.Now()
		for b.Loop() {
			f.send(b, http.StatusOK, reader, http.MethodGet, base+"/big/compose", nil)
			n++
		}
		reportMillis(b, start, n)
	})
}

// seed10k stores 10,000 small workflows in team infra through the store, as 10,000 creates
// would leave them, in seconds rather than the minutes the API would take.
func seed10k(b *testing.B, f *fixture) {
	b.Helper()
	ctx := context.Background()
	store := mongostore.NewDefinitions(f.db, testSealer(b))
	ns := domain.Namespace{Team: "infra", TeamID: "id-infra"}
	var def domain.Workflow
	require.NoError(b, json.Unmarshal(mustJSON(b, chain("x", 3)), &def))
	def.Normalize()
	const total = 10_000
	created := time.Now().Add(-time.Hour)
	entries := make([]domain.Entry, total)
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range work {
				w := def.Clone()
				w.Name = fmt.Sprintf("wf-%05d", i)
				w.Labels = map[string]string{"shard": fmt.Sprint(i % 10)}
				if i%4 == 0 {
					w.Status = domain.StatusInactive
				}
				_, err := store.InsertRevision(ctx, ns, domain.Revision{Name: w.Name, Version: 1, Rev: 1,
					Changelog: domain.Changelog{Author: "seed", Date: domain.NewTime(created)}, Workflow: w})
				require.NoError(b, err)
				entries[i] = domain.Entry{Name: w.Name, Latest: 1, Status: w.Status, Labels: w.Labels,
					CreationDate: created.Add(time.Duration(i) * time.Millisecond)}
			}
		})
	}
	for i := range total {
		work <- i
	}
	close(work)
	wg.Wait()
	_, err := store.UpdateCatalog(ctx, ns, func(next *domain.Catalog) ([]outbox.Entry, error) {
		for _, e := range entries {
			next.Put(e)
		}
		return nil, nil
	})
	require.NoError(b, err)
}

func mustJSON(b *testing.B, v any) []byte {
	raw, err := json.Marshal(v)
	require.NoError(b, err)
	return raw
}

func BenchmarkQuery10kWorkflows(b *testing.B) {
	f := newFixture(b, fixtureOptions{})
	start := time.Now()
	seed10k(b, f)
	b.Logf("seeded 10,000 workflows in %v", time.Since(start).Round(time.Millisecond))
	total := f.must(b, http.StatusOK, reader, http.MethodGet, base+"/query?limit=1", nil).body["totalElements"]
	require.EqualValues(b, 10_000, total)

	queries := []struct{ name, query string }{
		{"first page of 10", "?limit=10"},
		{"page 500 of 20, newest first", "?limit=20&page=500&sort=DESC"},
		{"labels and statuses", "?labels=shard%3D3&statuses=active&limit=25"},
		{"page of 100", "?limit=100&page=7"},
	}
	for _, q := range queries {
		b.Run(q.name, func(b *testing.B) {
			n, start := 0, time.Now()
			for b.Loop() {
				f.send(b, http.StatusOK, reader, http.MethodGet, base+"/query"+q.query, nil)
				n++
			}
			reportMillis(b, start, n)
		})
	}
	// Every iteration a page not read before: its summaries come from the database.
	b.Run("uncached pages of 10", func(b *testing.B) {
		n, start := 0, time.Now()
		for b.Loop() {
			f.send(b, http.StatusOK, reader, http.MethodGet, fmt.Sprintf(base+"/query?limit=10&page=%d&sort=DESC", n%1000), nil)
			n++
		}
		reportMillis(b, start, n)
	})
	// A save in the 10,000-workflow team: the catalog snapshot is rewritten.
	f.must(b, http.StatusCreated, editor, http.MethodPost, base, chain("changing", 2))
	body := mustJSON(b, chain("changing", 2))
	b.Run("save in the team", func(b *testing.B) {
		n, start := 0, time.Now()
		for b.Loop() {
			f.send(b, http.StatusOK, editor, http.MethodPut, base, body)
			n++
		}
		reportMillis(b, start, n)
	})
	// The first query after a change this process did not make: the snapshot is read and
	// decoded again.
	b.Run("query after a change elsewhere", func(b *testing.B) {
		other := mongostore.NewDefinitions(f.db, testSealer(b))
		ns := domain.Namespace{Team: "infra", TeamID: "id-infra"}
		n, elapsed := 0, time.Duration(0)
		for b.Loop() {
			b.StopTimer()
			_, err := other.UpdateCatalog(context.Background(), ns, func(next *domain.Catalog) ([]outbox.Entry, error) {
				e, _ := next.Entry("changing")
				e.Labels = map[string]string{"n": fmt.Sprint(n)}
				next.Put(e)
				return nil, nil
			})
			require.NoError(b, err)
			b.StartTimer()
			start := time.Now()
			f.send(b, http.StatusOK, reader, http.MethodGet, base+"/query?limit=10", nil)
			elapsed += time.Since(start)
			n++
		}
		b.ReportMetric(float64(elapsed.Microseconds())/1000/float64(n), "ms/op")
	})
}
