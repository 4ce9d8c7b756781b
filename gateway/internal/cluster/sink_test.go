package cluster

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The sink keeps each status event once by its id, by run, with its number, and knows a
// run's completion from its final event; what is not a structured CloudEvent is refused.
func TestSinkKeepsEachEventOnce(t *testing.T) {
	t.Parallel()
	s, err := newSink()
	require.NoError(t, err)
	t.Cleanup(s.close)
	post := func(body string) int {
		res, err := http.Post(s.url, "application/cloudevents+json", strings.NewReader(body))
		require.NoError(t, err)
		_ = res.Body.Close()
		return res.StatusCode
	}
	event := func(id, typ, subject, seq string) string {
		return `{"specversion":"1.0","id":"` + id + `","source":"/baton","type":"` + typ + `","subject":"` + subject + `","runseq":` + seq + `}`
	}
	const run, task = "io.baton.event.status.workflowrun", "io.baton.event.status.taskrun"
	tests := []struct {
		name string
		give string
		want int
	}{
		{"run started", event("r1/1/running", run, "/workflowrun/r1/status/running", "1"), http.StatusNoContent},
		{"a task's end, numbered as a string", event("r1.1/2/succeeded", task, "/workflowrun/r1/status/succeeded", `"2"`), http.StatusNoContent},
		{"sent again", event("r1/1/running", run, "/workflowrun/r1/status/running", "1"), http.StatusNoContent},
		{"the run's completion", event("r1/3/completed", run, "/workflowrun/r1/status/completed", "3"), http.StatusNoContent},
		{"another run's event", event("r2/1/running", run, "/workflowrun/r2/status/running", "1"), http.StatusNoContent},
		{"not an event", `{"hello":1}`, http.StatusBadRequest},
		{"not JSON", `nope`, http.StatusBadRequest},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, post(tt.give), tt.name)
	}
	assert.Equal(t, []int{1, 2, 3}, s.seqs("r1"))
	assert.True(t, s.completed("r1"))
	assert.Equal(t, []int{1}, s.seqs("r2"))
	assert.False(t, s.completed("r2"), "r2 has not completed")
	assert.Nil(t, s.seqs("r3"))
	assert.Equal(t, 4, s.count(), "four distinct events")
}

func TestReportErr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		problems []string
		want     string
	}{
		{"none", nil, ""},
		{"one", []string{"run r1 (chain) ended failed: boom"}, "chaos found 1 problems:\n  run r1 (chain) ended failed: boom"},
		{"two", []string{"a", "b"}, "chaos found 2 problems:\n  a\n  b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &Report{}
			for _, p := range tt.problems {
				r.problem("%s", p)
			}
			if tt.want == "" {
				assert.NoError(t, r.Err())
				return
			}
			assert.EqualError(t, r.Err(), tt.want)
			var b strings.Builder
			r.Print(&b)
			assert.Contains(t, b.String(), "problems")
		})
	}
}
