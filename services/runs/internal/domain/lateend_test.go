package domain

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/tasktype"
)

// The success of an attempt the lease took (its runner's beats did not get through while
// it delivered its end) is taken while the retry is not claimed: the step is not run
// again. Once the retry is claimed, or for any other late report, it is dropped.
func TestLateEndOfAnAttemptTheLeaseTook(t *testing.T) {
	t.Parallel()
	lost := func(t *testing.T, delay int) (*State, time.Time) {
		t.Helper()
		retries := 3
		def := &Definition{Tasks: []TaskDef{
			task("start", tasktype.Start, nil),
			{Name: "s", Type: tasktype.Script, Retries: &retries, RetryDelay: &delay,
				Params: []TaskParam{{Name: "script", Value: json.RawMessage(`"true"`)}}, Dependencies: []Dependency{{TaskRef: "start"}}},
			task("end", tasktype.End, nil, "s"),
		}}
		s, _ := started(t, def, nil)
		require.True(t, NewMachine(s, t0).Claim(1, 1, "r-a"))
		at := t0.Add(HeartbeatLease + time.Second)
		NewMachine(s, at).Tick(HeartbeatLease)
		require.Equal(t, Waiting, s.Tasks[1].Status, "the lease took attempt 1")
		NewMachine(s, at).Tick(HeartbeatLease) // a retry without delay is dispatched
		return s, at
	}
	tests := []struct {
		name string
		// delay is the retry delay: 0 has the retry dispatched (ready), 5 waiting.
		delay   int
		claimed bool
		runner  string
		status  Status
		taken   bool
	}{
		{"success, retry waiting for its delay", 5, false, "r-a", Succeeded, true},
		{"success, retry dispatched, not claimed", 0, false, "r-a", Succeeded, true},
		{"success, retry claimed", 0, true, "r-a", Succeeded, false},
		{"failure, retry not claimed", 0, false, "r-a", Failed, false},
		{"success from another runner", 0, false, "r-b", Succeeded, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, at := lost(t, tt.delay)
			if tt.claimed {
				require.True(t, NewMachine(s, at).Claim(1, 2, "r-b"))
			}
			m := NewMachine(s, at.Add(time.Second))
			got := m.EndedLate(1, 1, tt.runner, tt.status, "", map[string]string{}, nil)
			assert.Equal(t, tt.taken, got)
			if !tt.taken {
				assert.NotEqual(t, Succeeded, s.Tasks[1].Status, "nothing changed")
				return
			}
			assert.Equal(t, Succeeded, s.Tasks[1].Status)
			assert.Equal(t, 1, s.Tasks[1].Attempt, "the attempt that ran")
			assert.Equal(t, Succeeded, s.Run.Status, "the run goes on to its end")
			assert.False(t, NewMachine(s, at.Add(2*time.Second)).Claim(1, 2, "r-b"), "the retry is refused")
		})
	}
}
