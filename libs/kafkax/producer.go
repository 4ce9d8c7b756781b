package kafkax

import (
	"context"
	"fmt"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-flow/baton/libs/events"
)

// batchTimeout is how long the writer waits to fill a batch: as good as not at all. What
// one call gives still goes in one produce request, and a publish is answered in ~0.2 ms
// rather than the wait plus that (kafka-go's default of 1 s would be added to every
// synchronous publish). Waits of 100 µs to 2 ms were measured slower both one publish at
// a time and with 8 publishers side by side (BenchmarkPublish, BenchmarkPublishParallel).
const batchTimeout = 1 * time.Microsecond

// Message is one event to publish with its partition key.
type Message struct {
	// Key picks the partition; messages with the same key stay in order. Empty spreads
	// messages round-robin.
	Key string
	// Event is the envelope written as the message value.
	Event event.Event
	// Topic, when set, is the unprefixed topic this message goes to instead of the one
	// PublishMany names: one call then carries the messages of several topics, and none
	// waits for another's acknowledgement.
	Topic string
	// Trace, when set, is the trace context the event was recorded under (for example kept
	// in an outbox entry next to the event): the publish span joins that trace instead of
	// the caller's.
	Trace propagation.MapCarrier
}

// Producer publishes events and waits until every in-sync replica has them. It is safe for
// concurrent use; one per process is enough.
type Producer struct {
	cfg       Config
	writer    *kafka.Writer
	transport *kafka.Transport
	metrics   *producerMetrics
}

// NewProducer returns a Producer for cfg. It connects lazily, on the first publish.
func NewProducer(cfg Config) *Producer {
	transport := &kafka.Transport{ClientID: cfg.ClientID, DialTimeout: dialTimeout}
	return &Producer{
		cfg:       cfg,
		metrics:   newProducerMetrics(cfg),
		transport: transport,
		writer: &kafka.Writer{
			Addr:                   kafka.TCP(cfg.Brokers...),
			Balancer:               &kafka.Hash{},
			RequiredAcks:           kafka.RequireAll,
			BatchTimeout:           batchTimeout,
			AllowAutoTopicCreation: true,
			Transport:              transport,
		},
	}
}

// Publish writes e to the unprefixed topic under key and returns once the brokers have
// acknowledged it.
func (p *Producer) Publish(ctx context.Context, topic, key string, e event.Event) error {
	return p.PublishMany(ctx, topic, Message{Key: key, Event: e})
}

// PublishMany writes msgs to the unprefixed topic (or each to its own Message.Topic) in
// one call and returns once all are acknowledged. On error some messages may have been written; publishing them again is
// safe because consumers drop duplicates by event id.
func (p *Producer) PublishMany(ctx context.Context, topic string, msgs ...Message) error {
	if len(msgs) == 0 {
		return nil
	}
	full := p.cfg.Topic(topic)
	tracer := p.cfg.tracer()
	prop := p.cfg.propagator()

	kmsgs := make([]kafka.Message, len(msgs))
	spans := make([]trace.Span, len(msgs))
	endSpans := func(err error) {
		for _, s := range spans {
			if s == nil {
				continue
			}
			if err != nil {
				s.RecordError(err)
				s.SetStatus(codes.Error, err.Error())
			}
			s.End()
		}
	}
	for i, m := range msgs {
		full := full
		if m.Topic != "" {
			full = p.cfg.Topic(m.Topic)
		}
		value, err := events.Marshal(m.Event)
		if err != nil {
			endSpans(err)
			return fmt.Errorf("publish to %s: %w", full, err)
		}
		parent := ctx
		if m.Trace != nil {
			parent = prop.Extract(ctx, m.Trace)
		}
		spanCtx, span := tracer.Start(parent, "send "+full,
			trace.WithSpanKind(trace.SpanKindProducer),
			trace.WithAttributes(
				semconv.MessagingSystemKafka,
				semconv.MessagingOperationTypeSend,
				semconv.MessagingDestinationName(full),
				semconv.MessagingMessageID(m.Event.ID()),
				semconv.MessagingKafkaMessageKey(m.Key),
				attribute.String("cloudevents.event_type", m.Event.Type()),
			))
		spans[i] = span

		headers := HeaderCarrier{
			{Key: HeaderContentType, Value: []byte(events.ContentType)},
			{Key: HeaderEventID, Value: []byte(m.Event.ID())},
			{Key: HeaderEventType, Value: []byte(m.Event.Type())},
		}
		prop.Inject(spanCtx, &headers)
		kmsgs[i] = kafka.Message{Topic: full, Value: value, Headers: headers}
		if m.Key != "" {
			kmsgs[i].Key = []byte(m.Key)
		}
	}

	err := p.writer.WriteMessages(ctx, kmsgs...)
	endSpans(err)
	if err != nil {
		return fmt.Errorf("publish %d message(s) to %s: %w", len(kmsgs), kmsgs[0].Topic, err)
	}
	p.metrics.sent(topic, msgs)
	return nil
}

// Close flushes pending writes and releases connections.
func (p *Producer) Close() error {
	err := p.writer.Close()
	p.transport.CloseIdleConnections()
	if err != nil {
		return fmt.Errorf("close producer: %w", err)
	}
	return nil
}
