package ratelimit

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAllow(t *testing.T) {
	t.Parallel()
	type step struct {
		at        time.Duration // since the first request
		key       string
		wantOK    bool
		wantAfter time.Duration
	}
	tests := []struct {
		name  string
		rate  float64
		burst int
		steps []step
	}{
		{
			name: "burst then refill", rate: 1, burst: 2,
			steps: []step{
				{at: 0, key: "a", wantOK: true},
				{at: 0, key: "a", wantOK: true},
				{at: 0, key: "a", wantAfter: time.Second},
				{at: 500 * time.Millisecond, key: "a", wantAfter: 500 * time.Millisecond},
				{at: time.Second, key: "a", wantOK: true},
				{at: time.Second, key: "a", wantAfter: time.Second},
			},
		},
		{
			name: "clients have their own buckets", rate: 1, burst: 1,
			steps: []step{
				{at: 0, key: "a", wantOK: true},
				{at: 0, key: "a", wantAfter: time.Second},
				{at: 0, key: "b", wantOK: true},
			},
		},
		{
			name: "refill stops at the burst", rate: 10, burst: 2,
			steps: []step{
				{at: 0, key: "a", wantOK: true},
				{at: time.Hour, key: "a", wantOK: true},
				{at: time.Hour, key: "a", wantOK: true},
				{at: time.Hour, key: "a", wantAfter: 100 * time.Millisecond},
			},
		},
		{
			name: "a clock read before an earlier request's adds nothing", rate: 1, burst: 1,
			steps: []step{
				{at: time.Second, key: "a", wantOK: true},
				{at: 900 * time.Millisecond, key: "a", wantAfter: time.Second},
			},
		},
		{
			name: "slow rate", rate: 0.1, burst: 1,
			steps: []step{
				{at: 0, key: "a", wantOK: true},
				{at: 0, key: "a", wantAfter: 10 * time.Second},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := New(tt.rate, tt.burst, 1000)
			start := time.Now()
			for i, s := range tt.steps {
				ok, after := l.Allow(l.CredentialKey(s.key), start.Add(s.at))
				assert.Equal(t, s.wantOK, ok, "step %d", i)
				assert.InDelta(t, s.wantAfter, after, float64(time.Millisecond), "step %d", i)
			}
		})
	}
}

func TestKeysOfCredentialsAndAddressesDiffer(t *testing.T) {
	t.Parallel()
	l := New(1, 1, 1000)
	assert.NotEqual(t, l.CredentialKey("10.0.0.1"), l.AddrKey("10.0.0.1"))
	assert.Equal(t, l.CredentialKey("tok"), l.CredentialKey("tok"))
}

func TestSweepForgetsOnlyFullBuckets(t *testing.T) {
	t.Parallel()
	l := New(1, 2, 1000)
	start := time.Now()
	l.Allow(l.AddrKey("old"), start)
	l.Allow(l.AddrKey("recent"), start.Add(1500*time.Millisecond))
	require.Equal(t, 2, l.Len())

	// At 2s the old bucket is full again; the recent one is not.
	l.Sweep(start.Add(2 * time.Second))
	assert.Equal(t, 1, l.Len())
	ok, _ := l.Allow(l.AddrKey("recent"), start.Add(2*time.Second))
	assert.True(t, ok)
	ok, _ = l.Allow(l.AddrKey("recent"), start.Add(2*time.Second))
	assert.False(t, ok, "the recent bucket kept its state")
}

func TestMemoryIsBounded(t *testing.T) {
	t.Parallel()
	const maxKeys = numShards * 4
	l := New(1, 1, maxKeys)
	now := time.Now()
	for i := range 100 * maxKeys {
		l.Allow(uint64(i), now)
	}
	assert.LessOrEqual(t, l.Len(), maxKeys)
}

func TestConcurrentRequestsShareOneBurst(t *testing.T) {
	t.Parallel()
	l := New(1, 100, 1000)
	key := l.CredentialKey("tok")
	now := time.Now()
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if ok, _ := l.Allow(key, now); ok {
					allowed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	assert.EqualValues(t, 100, allowed.Load())
}

func BenchmarkAllow(b *testing.B) {
	l := New(1e9, 1e9, 100_000)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		key := l.CredentialKey(time.Now().String())
		for pb.Next() {
			l.Allow(key, time.Now())
		}
	})
}
