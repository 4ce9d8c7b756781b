package kafkax

import "time"

// SetGatherWait sets how long c's batches wait for messages after their first. A test that
// needs a batch to hold messages of several partitions sets it far above the time the
// partitions take to arrive, with Concurrency a divisor of the messages it sends, so every
// batch fills up and none waits the window out.
func (c *Consumer) SetGatherWait(d time.Duration) { c.gatherWait = d }
