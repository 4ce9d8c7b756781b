// Package kafkax moves events.Event envelopes over Kafka with segmentio/kafka-go: a Producer
// that waits for every in-sync replica, a Consumer that retries, dead-letters and commits only
// after handling (at-least-once; consumers drop duplicates by event id), trace context carried
// in message headers, and topic bootstrap.
//
// Topic names given to this package are unprefixed (events.TeamEvents); Config.TopicPrefix is
// added here, so services never build full names themselves.
package kafkax

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-flow/baton/libs/events"
)

// instrumentation is the OTel instrumentation scope of this package's spans.
const instrumentation = "github.com/baton-flow/baton/libs/kafkax"

// dialTimeout bounds connecting to a broker when the caller's context has no deadline.
const dialTimeout = 10 * time.Second

// Config is what producers, consumers and the admin calls need to reach a cluster.
type Config struct {
	// Brokers are bootstrap addresses, host:port.
	Brokers []string
	// TopicPrefix is put before every topic name; empty means events.DefaultTopicPrefix.
	TopicPrefix string
	// ClientID names this process to the brokers (quotas, broker logs).
	ClientID string
	// TracerProvider makes the producer and consumer spans; nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// Propagator writes and reads trace context in message headers; nil means
	// otel.GetTextMapPropagator().
	Propagator propagation.TextMapPropagator
	// MeterProvider makes the messages' metrics (metrics.go); nil means
	// otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
}

// Topic is the full name of the unprefixed topic name under this configuration.
func (c Config) Topic(name string) string {
	prefix := c.TopicPrefix
	if prefix == "" {
		prefix = events.DefaultTopicPrefix
	}
	return events.Topic(prefix, name)
}

func (c Config) tracer() trace.Tracer {
	tp := c.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(instrumentation)
}

func (c Config) propagator() propagation.TextMapPropagator {
	if c.Propagator != nil {
		return c.Propagator
	}
	return otel.GetTextMapPropagator()
}

func (c Config) dialer() *kafka.Dialer {
	return &kafka.Dialer{ClientID: c.ClientID, Timeout: dialTimeout, DualStack: true}
}

func (c Config) validate() error {
	if len(c.Brokers) == 0 {
		return errors.New("kafkax: no brokers configured")
	}
	return nil
}

// ErrPermanent marks a handler error that retrying cannot fix (a malformed payload, a
// reference to something that will never exist): the Consumer dead-letters the message at
// once instead of retrying it. Wrap it, or use Permanent.
var ErrPermanent = errors.New("permanent failure")

// Permanent wraps err so that errors.Is(result, ErrPermanent) and errors.Is(result, err) hold.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrPermanent, err)
}

// kafkaLogger adapts slog to kafka-go's Printf-style loggers.
func kafkaLogger(l *slog.Logger, level slog.Level) kafka.Logger {
	return kafka.LoggerFunc(func(msg string, args ...any) {
		l.Log(context.Background(), level, fmt.Sprintf(msg, args...))
	})
}
