package app_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeliveryResentRecordedOnce: a run's events sent again once delivered and their queue
// deleted (the runs service sends again what it was not told is recorded) are recorded
// once, not queued and delivered anew; a sink added since gets what comes again.
func TestDeliveryResentRecordedOnce(t *testing.T) {
	t.Parallel()
	send := newSender(nil)
	store, set := newMemStore(), &sinks{}
	set.set(sinkA)
	d, start := deliveries(t, fast, "r1", store, set, send, time.Now)
	start()
	const each = 20
	for n := range each {
		record(t, d, statusEvent("run", n))
	}
	require.Eventually(t, func() bool { return len(send.received(sinkA)) == each }, wait, tick)
	require.Eventually(t, func() bool { q, e := store.size(); return q == 0 && e == 0 }, wait, tick, "delivered queue deleted")

	for n := range each {
		record(t, d, statusEvent("run", n))
	}
	// The run's next event comes after them in its queue, had they been queued again.
	record(t, d, statusEvent("run", each))
	require.Eventually(t, func() bool { return len(send.ofRun(sinkA, "run")) >= each+1 }, wait, tick)
	assert.Equal(t, idsOf("run", 0, each+1), send.ofRun(sinkA, "run"), "each event delivered once")

	set.set(sinkA, sinkC)
	for n := range each {
		record(t, d, statusEvent("run", n))
	}
	require.Eventually(t, func() bool { return len(send.received(sinkC)) == each }, wait, tick)
	assert.Equal(t, idsOf("run", 0, each), send.ofRun(sinkC, "run"), "a sink added since gets what comes again")
}
