package domain

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/param"
	"github.com/baton-flow/baton/libs/tasktype"
)

// gated is start → gate → after → end, the gate of type typ with params.
func gated(t *testing.T, typ string, params map[string]any) (*State, *Machine) {
	t.Helper()
	return started(t, &Definition{Tasks: []TaskDef{
		task("start", tasktype.Start, nil),
		task("gate", typ, params, "start"),
		task("after", tasktype.SetWFProperty, map[string]any{"output": "x", "value": "$(tasks.gate.results.data)"}, "gate:success"),
		task("end", tasktype.End, nil, "after"),
	}}, nil)
}

func TestGatesWait(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		typ     string
		params  map[string]any
		status  Status
		awaits  bool
		effects func(Effects) []int
	}{
		{"approval waits with an action", tasktype.Approval, map[string]any{"numberOfApprovers": 2}, Waiting, true, func(e Effects) []int { return e.Actions }},
		{"manual waits with an action", tasktype.Manual, map[string]any{"instructions": "do it"}, Waiting, false, func(e Effects) []int { return e.Actions }},
		{"eventwait waits", tasktype.EventWait, map[string]any{"topic": "deployed"}, Waiting, false, func(Effects) []int { return nil }},
		{"acquirelock asks for its lock", tasktype.AcquireLock, map[string]any{"key": "prod"}, Waiting, false, func(e Effects) []int { return e.Acquire }},
		{"releaselock lets its lock go", tasktype.ReleaseLock, map[string]any{"key": "prod"}, Running, false, func(e Effects) []int { return e.Release }},
		{"approval with a bad number is invalid", tasktype.Approval, map[string]any{"numberOfApprovers": 0}, Invalid, false, func(Effects) []int { return nil }},
		{"approval with a bad onTimeout is invalid", tasktype.Approval, map[string]any{"onTimeout": "maybe"}, Invalid, false, func(Effects) []int { return nil }},
		{"manual with a bad form is invalid", tasktype.Manual, map[string]any{"params": "not json"}, Invalid, false, func(Effects) []int { return nil }},
		{"eventwait without a topic is invalid", tasktype.EventWait, nil, Invalid, false, func(Effects) []int { return nil }},
		{"acquirelock without a key is invalid", tasktype.AcquireLock, map[string]any{"timeout": 5}, Invalid, false, func(Effects) []int { return nil }},
		{"a negative timeout is invalid", tasktype.EventWait, map[string]any{"topic": "x", "timeout": -1}, Invalid, false, func(Effects) []int { return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, m := gated(t, tt.typ, tt.params)
			assert.Equal(t, tt.status, s.Tasks[1].Status, s.Tasks[1].StatusMessage)
			assert.Equal(t, tt.awaits, s.Run.AwaitingApproval)
			if want := tt.effects(m.Effects()); tt.status != Invalid && want != nil {
				assert.Equal(t, []int{1}, want)
			}
			if tt.status == Invalid {
				assert.Equal(t, Failed, s.Run.Status)
			} else {
				assert.Equal(t, Running, s.Run.Status)
			}
		})
	}
}

func TestActionDecided(t *testing.T) {
	t.Parallel()
	s, _ := gated(t, tasktype.Manual, map[string]any{"params": []any{map[string]any{"name": "data", "type": "text"}}})
	m := NewMachine(s, t0.Add(time.Minute))
	assert.False(t, m.ActionDecided(1, 2, ActionApproved, "", nil, nil), "another attempt's decision is refused")
	require.True(t, m.ActionDecided(1, 1, ActionApproved, "", map[string]string{"data": "v1"}, nil))
	assert.Equal(t, "start=succeeded gate=succeeded after=succeeded end=succeeded", statuses(s))
	assert.Equal(t, "v1", s.Run.Results["x"])
	assert.False(t, NewMachine(s, t0).ActionDecided(1, 1, ActionApproved, "", nil, nil), "a second decision is refused")

	s, _ = gated(t, tasktype.Approval, nil)
	require.True(t, s.Run.AwaitingApproval)
	m = NewMachine(s, t0)
	require.True(t, m.ActionDecided(1, 1, ActionRejected, "rejected by ann", nil, nil))
	assert.False(t, s.Run.AwaitingApproval)
	assert.Equal(t, Failed, s.Tasks[1].Status)
	assert.Equal(t, Failed, s.Run.Status)
	st, _, ok := s.ActionState(1, &Action{ID: ActionID(s.Tasks[1].ID, 1)})
	assert.True(t, ok)
	assert.Equal(t, ActionRejected, st)
}

func TestCallbacks(t *testing.T) {
	t.Parallel()
	t.Run("a waiting task takes the callback's data", func(t *testing.T) {
		t.Parallel()
		s, _ := gated(t, tasktype.EventWait, map[string]any{"topic": "deployed"})
		m := NewMachine(s, t0)
		require.NoError(t, m.CallbackArrived("other", Succeeded, ""))
		assert.Equal(t, Waiting, s.Tasks[1].Status)
		require.NoError(t, m.CallbackArrived("deployed", Succeeded, `{"v":1}`))
		assert.Equal(t, Succeeded, s.Run.Status)
		assert.Equal(t, `{"v":1}`, s.Run.Results["x"])
	})
	t.Run("a callback that came first is kept for the task", func(t *testing.T) {
		t.Parallel()
		s, _ := started(t, &Definition{Tasks: []TaskDef{
			task("start", tasktype.Start, nil),
			task("nap", tasktype.Sleep, map[string]any{"duration": 1000}, "start"),
			task("gate", tasktype.EventWait, map[string]any{"topic": "t"}, "nap"),
			task("end", tasktype.End, nil, "gate:failure"),
		}}, nil)
		m := NewMachine(s, t0)
		require.NoError(t, m.CallbackArrived("t", Failed, ""))
		require.Contains(t, s.Run.Callbacks, "t")
		m = NewMachine(s, t0.Add(2*time.Second))
		m.Tick(0)
		assert.Equal(t, Failed, s.Tasks[2].Status)
		assert.Equal(t, Succeeded, s.Run.Status, "the failure edge carries on")
	})
	t.Run("an ended run refuses callbacks", func(t *testing.T) {
		t.Parallel()
		s, m := gated(t, tasktype.EventWait, map[string]any{"topic": "t"})
		require.NoError(t, m.Cancel("stop"))
		assert.Error(t, NewMachine(s, t0).CallbackArrived("t", Succeeded, ""))
	})
	t.Run("kept topics are bounded", func(t *testing.T) {
		t.Parallel()
		s, _ := gated(t, tasktype.EventWait, map[string]any{"topic": "t"})
		m := NewMachine(s, t0)
		for i := range MaxKeptCallbacks {
			require.NoError(t, m.CallbackArrived(string(rune('a'+i%26))+string(rune('0'+i/26)), Succeeded, ""))
		}
		var re *ErrRequest
		assert.ErrorAs(t, m.CallbackArrived("one-more", Succeeded, ""), &re)
	})
}

func TestGateTimeouts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		typ    string
		params map[string]any
		after  time.Duration
		want   Status
	}{
		{"approval rejects on timeout by default", tasktype.Approval, map[string]any{"timeout": 10}, 10 * time.Minute, TimedOut},
		{"approval may approve on timeout", tasktype.Approval, map[string]any{"timeout": 10, "onTimeout": "approve"}, 10 * time.Minute, Succeeded},
		{"eventwait times out", tasktype.EventWait, map[string]any{"topic": "t", "timeout": 1}, time.Minute, TimedOut},
		{"a lock's timeout is in seconds", tasktype.AcquireLock, map[string]any{"key": "k", "timeout": 30}, 30 * time.Second, TimedOut},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, m := gated(t, tt.typ, tt.params)
			wake := m.NextWake(0)
			require.Equal(t, t0.Add(tt.after), wake)
			NewMachine(s, wake.Add(-time.Millisecond)).Tick(0)
			require.Equal(t, Waiting, s.Tasks[1].Status)
			m = NewMachine(s, wake)
			m.Tick(0)
			assert.Equal(t, tt.want, s.Tasks[1].Status)
			assert.False(t, s.Run.AwaitingApproval)
			if tt.typ == tasktype.AcquireLock {
				assert.Equal(t, []int{1}, m.Effects().Leave)
			}
		})
	}
}

func TestLocksInTheMachine(t *testing.T) {
	t.Parallel()
	s, _ := gated(t, tasktype.AcquireLock, map[string]any{"key": "prod"})
	m := NewMachine(s, t0)
	held, _ := m.LockGranted(1, 2)
	assert.False(t, held, "another attempt's grant is refused")
	held, changed := m.LockGranted(1, 1)
	require.True(t, held && changed)
	assert.Equal(t, Succeeded, s.Tasks[1].Status)
	held, changed = NewMachine(s, t0).LockGranted(1, 1)
	assert.True(t, held && !changed, "a grant told twice is held, unchanged")

	s, m = gated(t, tasktype.AcquireLock, map[string]any{"key": "prod", "timeout": 1})
	NewMachine(s, t0.Add(time.Second)).Tick(0)
	held, _ = NewMachine(s, t0).LockGranted(1, 1)
	assert.False(t, held, "a task that stopped waiting does not want the lock")

	s, _ = gated(t, tasktype.ReleaseLock, map[string]any{"key": "prod"})
	NewMachine(s, t0).LockReleased(1, 1, false)
	assert.Equal(t, Succeeded, s.Tasks[1].Status)
	assert.Equal(t, "the run did not hold lock 'prod'", s.Tasks[1].StatusMessage)
}

// A release that finds the lock let go already says the run did not hold it only when no
// acquirelock task took it: otherwise an earlier try let it go, before a crash.
func TestLockReleasedAgain(t *testing.T) {
	t.Parallel()
	s, _ := started(t, &Definition{Tasks: []TaskDef{
		task("start", tasktype.Start, nil),
		task("lock", tasktype.AcquireLock, map[string]any{"key": "prod"}, "start"),
		task("unlock", tasktype.ReleaseLock, map[string]any{"key": "prod"}, "lock"),
		task("again", tasktype.ReleaseLock, map[string]any{"key": "prod"}, "unlock"),
		task("end", tasktype.End, nil, "again"),
	}}, nil)
	held, _ := NewMachine(s, t0.Add(time.Second)).LockGranted(1, 1)
	require.True(t, held)
	NewMachine(s, t0.Add(2*time.Second)).LockReleased(2, 1, false)
	assert.Equal(t, Succeeded, s.Tasks[2].Status)
	assert.Empty(t, s.Tasks[2].StatusMessage, "released by an earlier try")
	NewMachine(s, t0.Add(3*time.Second)).LockReleased(3, 1, false)
	assert.Equal(t, "the run did not hold lock 'prod'", s.Tasks[3].StatusMessage, "released by the task before")
}

func TestLockQueue(t *testing.T) {
	t.Parallel()
	var l Lock
	a, b, c := Waiter{Run: "a", Task: 1, Attempt: 1}, Waiter{Run: "b", Task: 1, Attempt: 1}, Waiter{Run: "c", Task: 1, Attempt: 1}
	assert.True(t, l.Acquire(a))
	assert.False(t, l.Acquire(b))
	assert.False(t, l.Acquire(c))
	assert.False(t, l.Acquire(b), "asking again keeps one place")
	assert.True(t, l.Acquire(Waiter{Run: "a", Task: 3, Attempt: 1}), "a run holds its lock for all its tasks")
	next, ok := l.Release("a")
	require.True(t, ok)
	assert.Equal(t, b, next)
	assert.False(t, l.Notified)
	l.Leave(c)
	_, ok = l.Release("b")
	assert.False(t, ok)
	assert.True(t, l.Free())
}

func TestDecide(t *testing.T) {
	t.Parallel()
	ann, bob, cy := Vote{By: Actioner{ID: "ann", Name: "Ann"}, Approved: true}, Vote{By: Actioner{ID: "bob", Name: "Bob"}, Approved: true}, Vote{By: Actioner{ID: "cy", Name: "Cy"}}
	a := &Action{Type: ApprovalAction, Status: ActionSubmitted, Required: 2}
	require.NoError(t, a.Decide(ann, "", t0))
	assert.Equal(t, ActionSubmitted, a.Status)
	assert.ErrorIs(t, a.Decide(ann, "", t0), ErrSameVote, "the same vote again is a repeat")
	assert.ErrorIs(t, a.Decide(Vote{By: ann.By}, "", t0), ErrVotedAlready)
	require.NoError(t, a.Decide(bob, "", t0))
	assert.Equal(t, ActionApproved, a.Status)
	assert.ErrorIs(t, a.Decide(cy, "", t0), ErrActionClosed)
	_, msg, _, _ := a.Outcome()
	assert.Equal(t, "approved by Ann, Bob", msg)

	a = &Action{Type: ApprovalAction, Status: ActionSubmitted, Required: 2}
	require.NoError(t, a.Decide(cy, "", t0))
	assert.Equal(t, ActionRejected, a.Status, "one rejection rejects")
}

func TestCheckForm(t *testing.T) {
	t.Parallel()
	two, five := 2, 5
	form := []param.Param{
		{Name: "version", Type: "text", Required: true, MinValueLength: &two, MaxValueLength: &five},
		{Name: "count", Type: "number"},
		{Name: "env", Type: "select", Options: []param.Option{{Key: "dev"}, {Key: "prod"}}, Default: json.RawMessage(`"dev"`)},
		{Name: "mail", Type: "email"},
		{Name: "go", Type: "boolean"},
		{Name: "pw", Type: "password"},
	}
	tests := []struct {
		name   string
		values map[string]any
		want   map[string]any
		fields []string
	}{
		{"good values, defaults filled", map[string]any{"version": "1.2", "count": 3.0, "go": true, "pw": "s"},
			map[string]any{"version": "1.2", "count": 3.0, "env": "dev", "go": true, "pw": "s"}, nil},
		{"each bad field named", map[string]any{"version": "1.2.3.4", "count": "x", "env": "qa", "mail": "nope", "go": "yes", "extra": 1},
			nil, []string{"params.version", "params.count", "params.env", "params.mail", "params.go", "params.extra"}},
		{"required missing", map[string]any{}, nil, []string{"params.version"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, secret, err := CheckForm(form, tt.values)
			if tt.fields == nil {
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
				assert.Equal(t, []string{"pw"}, secret)
				return
			}
			var re *ErrRequest
			require.ErrorAs(t, err, &re)
			assert.ElementsMatch(t, tt.fields, slices.Collect(maps.Keys(re.Fields)))
		})
	}
}

func TestActionHolds(t *testing.T) {
	t.Parallel()
	ann, bob := Vote{By: Actioner{ID: "ann"}, Approved: true}, Vote{By: Actioner{ID: "bob"}, Approved: true}
	a := &Action{Type: ApprovalAction, Status: ActionSubmitted, Required: 2}
	until := t0.Add(30 * time.Second)
	require.NoError(t, a.Reserve(ann, "req-1", until, t0))
	assert.ErrorIs(t, a.Reserve(bob, "req-2", until, t0), ErrActionBusy, "held by another request")
	assert.ErrorIs(t, a.Decide(bob, "", t0), ErrActionBusy, "a single decision waits too")
	require.NoError(t, a.Decide(ann, "req-1", t0), "the holder decides")
	assert.Empty(t, a.Hold, "and lets go")
	require.NoError(t, a.Reserve(bob, "req-2", until, t0))
	assert.NoError(t, a.Decide(Vote{By: Actioner{ID: "cy"}, Approved: true}, "", until), "a hold runs out")

	b := &Action{Type: ApprovalAction, Status: ActionSubmitted, Required: 1}
	require.NoError(t, b.Reserve(ann, "req-1", until, t0))
	assert.False(t, b.Unhold("req-2"))
	assert.True(t, b.Unhold("req-1"))
	assert.ErrorIs(t, b.Reserve(Vote{By: Actioner{ID: "ann"}}, "req-3", until, t0.Add(time.Second)), nil)
	assert.ErrorIs(t, (&Action{Status: ActionRejected}).Reserve(ann, "r", until, t0), ErrActionClosed)
}
