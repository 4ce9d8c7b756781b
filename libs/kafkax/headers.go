package kafkax

import "github.com/segmentio/kafka-go"

// Header names set on every published message, so tools and consumers can route or drop a
// message without decoding its value.
const (
	HeaderContentType = "content-type"
	HeaderEventID     = "ce_id"
	HeaderEventType   = "ce_type"
)

// Header names a dead-lettered message carries besides its original headers.
const (
	HeaderDLQError     = "dlq_error"
	HeaderDLQTopic     = "dlq_original_topic"
	HeaderDLQPartition = "dlq_original_partition"
	HeaderDLQOffset    = "dlq_original_offset"
	HeaderDLQGroup     = "dlq_consumer_group"
	HeaderDLQAttempts  = "dlq_attempts"
)

// HeaderCarrier adapts message headers to propagation.TextMapCarrier so the OTel propagator
// can write and read trace context in them: prop.Inject(ctx, (*HeaderCarrier)(&msg.Headers)).
type HeaderCarrier []kafka.Header

// Get returns the value of the first header named key, or "".
func (c *HeaderCarrier) Get(key string) string {
	for _, h := range *c {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// Set replaces the value of the header named key, or appends it.
func (c *HeaderCarrier) Set(key, value string) {
	for i, h := range *c {
		if h.Key == key {
			(*c)[i].Value = []byte(value)
			return
		}
	}
	*c = append(*c, kafka.Header{Key: key, Value: []byte(value)})
}

// Keys lists the header names in order.
func (c *HeaderCarrier) Keys() []string {
	keys := make([]string, 0, len(*c))
	for _, h := range *c {
		keys = append(keys, h.Key)
	}
	return keys
}
