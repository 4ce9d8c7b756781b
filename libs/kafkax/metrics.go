package kafkax

import (
	"context"
	"sync/atomic"

	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// meter answers the meter of this package's instruments.
func (c Config) meter() metric.Meter {
	mp := c.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	return mp.Meter(instrumentation)
}

// Labels: topics are the unprefixed names of libs/events (a fixed list); a group is the
// consumer's GroupLabel, which leaves out a replica's name.

// consumerMetrics are a consumer's instruments.
type consumerMetrics struct {
	consumed metric.Int64Counter
	lag      metric.Int64ObservableGauge
	attrs    metric.AddOption
	kv       []attribute.KeyValue
	// reader is the reader while Run runs, for the lag.
	reader atomic.Pointer[kafka.Reader]
}

func newConsumerMetrics(cfg Config, topic, group string) *consumerMetrics {
	meter := cfg.meter()
	m := &consumerMetrics{kv: []attribute.KeyValue{attribute.String("topic", topic), attribute.String("group", group)}}
	m.attrs = metric.WithAttributes(m.kv...)
	// Errors from the SDK only say an instrument's name is malformed, which these are not.
	m.consumed, _ = meter.Int64Counter("baton_kafka_consumed",
		metric.WithDescription("Messages a consumer group's member settled (handled, dead-lettered or skipped) and committed, by topic and group."),
		metric.WithUnit("{message}"))
	m.lag, _ = meter.Int64ObservableGauge("baton_kafka_consumer_lag",
		metric.WithDescription("Messages behind the partition's end, as this member's reader last fetched (the partition it fetched last), by topic and group."),
		metric.WithUnit("{message}"))
	return m
}

// follow reports r's lag until the returned function is called.
func (m *consumerMetrics) follow(cfg Config, r *kafka.Reader) func() {
	m.reader.Store(r)
	reg, err := cfg.meter().RegisterCallback(func(_ context.Context, o metric.Observer) error {
		if r := m.reader.Load(); r != nil {
			o.ObserveInt64(m.lag, r.Stats().Lag, m.attrsObserve())
		}
		return nil
	}, m.lag)
	return func() {
		m.reader.Store(nil)
		if err == nil {
			_ = reg.Unregister()
		}
	}
}

func (m *consumerMetrics) attrsObserve() metric.ObserveOption { return metric.WithAttributes(m.kv...) }

// producerMetrics are a producer's instruments.
type producerMetrics struct {
	published metric.Int64Counter
}

func newProducerMetrics(cfg Config) *producerMetrics {
	m := &producerMetrics{}
	m.published, _ = cfg.meter().Int64Counter("baton_kafka_published",
		metric.WithDescription("Messages the brokers acknowledged, by topic."),
		metric.WithUnit("{message}"))
	return m
}

// sent counts msgs acknowledged, topic being the unprefixed topic of those without their own.
func (m *producerMetrics) sent(topic string, msgs []Message) {
	counts := map[string]int64{}
	for _, msg := range msgs {
		t := topic
		if msg.Topic != "" {
			t = msg.Topic
		}
		counts[t]++
	}
	for t, n := range counts {
		m.published.Add(context.Background(), n, metric.WithAttributes(attribute.String("topic", t)))
	}
}
