package mongostore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/runs/internal/mongostore"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func newStore(t *testing.T) *mongostore.Store {
	t.Helper()
	client, err := mongox.Connect(context.Background(), testkit.MongoURI(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	s := mongostore.New(client.Database(testkit.Database(t)))
	require.NoError(t, s.EnsureIndexes(context.Background()))
	return s
}

func TestSlotsAreASet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	steps := []struct {
		op   string
		run  string
		want bool
	}{
		{"acquire", "a", true},
		{"acquire", "a", true}, // held already
		{"acquire", "b", true},
		{"acquire", "c", false},
		{"release", "a", true},
		{"release", "a", true}, // twice is harmless
		{"acquire", "c", true},
		{"acquire", "d", false},
	}
	for _, st := range steps {
		if st.op == "release" {
			require.NoError(t, s.ReleaseSlot(ctx, "t", st.run))
			continue
		}
		got, err := s.AcquireSlot(ctx, "t", st.run, 2)
		require.NoError(t, err)
		assert.Equal(t, st.want, got, "%s %s", st.op, st.run)
	}
	u, err := s.Usage(ctx, "t", "2026-11")
	require.NoError(t, err)
	assert.Equal(t, 2, u.Concurrent)
}

func TestMonthlyCountAndKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	for i, want := range []bool{true, true, false} {
		ok, err := s.CountMonthly(ctx, "t", "2026-11", 2)
		require.NoError(t, err)
		assert.Equal(t, want, ok, "run %d", i)
	}
	now := time.Now()
	held, err := s.Claim(ctx, "k", "r1", now)
	require.NoError(t, err)
	assert.Equal(t, "r1", held)
	held, err = s.Claim(ctx, "k", "r2", now)
	require.NoError(t, err)
	assert.Equal(t, "r1", held)
	held, err = s.Claim(ctx, "k", "r3", now.Add(mongostore.KeyTTL+time.Minute))
	require.NoError(t, err)
	assert.Equal(t, "r3", held, "an expired key names the new run")
}
