// Package ratelimit is the gateway's per-client token bucket: each client (a credential, or
// the remote address of a request without one) may send rate requests a second on average
// and burst at once. Memory is bounded: idle buckets are swept, and a full table evicts.
package ratelimit

import (
	"hash/maphash"
	"sync"
	"time"
)

// numShards spreads buckets over independently locked maps so parallel requests of
// different clients rarely contend.
const numShards = 64

// Limiter holds one token bucket per client key. It is safe for concurrent use.
type Limiter struct {
	perNano     float64 // tokens added per nanosecond
	burst       float64
	idle        int64 // nanoseconds after which an untouched bucket is full again
	maxPerShard int
	epoch       time.Time // buckets count time from here, on the monotonic clock
	credSeed    maphash.Seed
	addrSeed    maphash.Seed
	shards      [numShards]shard
}

type shard struct {
	mu      sync.Mutex
	buckets map[uint64]bucket
	// Keeps neighbouring shards' locks off one cache line.
	_ [40]byte
}

type bucket struct {
	tokens float64
	last   int64 // nanoseconds since the limiter's epoch
}

// New returns a Limiter granting rate (> 0) requests a second with bursts of burst (at least
// 1), holding at most maxKeys buckets (at least one per shard).
func New(rate float64, burst, maxKeys int) *Limiter {
	if burst < 1 {
		burst = 1
	}
	l := &Limiter{
		perNano:     rate / float64(time.Second),
		burst:       float64(burst),
		idle:        int64(float64(burst) / rate * float64(time.Second)),
		maxPerShard: max(1, maxKeys/numShards),
		epoch:       time.Now(),
		credSeed:    maphash.MakeSeed(),
		addrSeed:    maphash.MakeSeed(),
	}
	for i := range l.shards {
		l.shards[i].buckets = map[uint64]bucket{}
	}
	return l
}

// CredentialKey is the client key of a credential. The key is a keyed hash, so the table
// never holds a token.
func (l *Limiter) CredentialKey(credential string) uint64 {
	return maphash.String(l.credSeed, credential)
}

// AddrKey is the client key of a remote address, for requests without credentials.
func (l *Limiter) AddrKey(addr string) uint64 {
	return maphash.String(l.addrSeed, addr)
}

// Allow takes a token from key's bucket at now. When the bucket is empty it answers false
// and how long until a token is back.
func (l *Limiter) Allow(key uint64, now time.Time) (bool, time.Duration) {
	t := int64(now.Sub(l.epoch))
	sh := &l.shards[key%numShards]
	sh.mu.Lock()
	b, ok := sh.buckets[key]
	switch {
	case !ok:
		if len(sh.buckets) >= l.maxPerShard {
			l.evict(sh, t)
		}
		b = bucket{tokens: l.burst, last: t}
	case t > b.last:
		// Callers read the clock before taking the lock, so t may lag b.last slightly; such a
		// request simply adds no tokens.
		b.tokens = min(l.burst, b.tokens+float64(t-b.last)*l.perNano)
		b.last = t
	}
	if b.tokens >= 1 {
		b.tokens--
		sh.buckets[key] = b
		sh.mu.Unlock()
		return true, 0
	}
	sh.buckets[key] = b
	sh.mu.Unlock()
	return false, time.Duration((1 - b.tokens) / l.perNano)
}

// evict makes room in a full shard: buckets idle long enough to be full again go first
// (forgetting them changes nothing), then arbitrary ones, which only hands those clients a
// fresh burst.
func (l *Limiter) evict(sh *shard, t int64) {
	l.sweepShard(sh, t)
	for k := range sh.buckets {
		if len(sh.buckets) < l.maxPerShard {
			break
		}
		delete(sh.buckets, k)
	}
}

func (l *Limiter) sweepShard(sh *shard, t int64) {
	for k, b := range sh.buckets {
		if t-b.last >= l.idle {
			delete(sh.buckets, k)
		}
	}
}

// Sweep forgets the buckets that have been idle long enough to be full again.
func (l *Limiter) Sweep(now time.Time) {
	t := int64(now.Sub(l.epoch))
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		l.sweepShard(sh, t)
		sh.mu.Unlock()
	}
}

// Len returns the number of buckets held.
func (l *Limiter) Len() int {
	n := 0
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		n += len(sh.buckets)
		sh.mu.Unlock()
	}
	return n
}

// IdleAfter is how long an untouched bucket takes to be full again, the useful interval
// between sweeps.
func (l *Limiter) IdleAfter() time.Duration {
	return time.Duration(l.idle)
}
