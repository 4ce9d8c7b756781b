package kafkax

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-flow/baton/libs/events"
)

// Consumer defaults, chosen so that a new group gets its first message in well under a second
// against one broker and a stopped consumer's partitions move on quickly.
const (
	defaultMaxAttempts = 5
	defaultBackoff     = 100 * time.Millisecond
	defaultMaxBackoff  = 30 * time.Second

	// maxWait bounds a fetch: kafka-go asks the broker to hold an idle fetch for maxWait
	// less its round-trip allowance (1 s, or a quarter of maxWait below 4 s) and gives up on
	// the connection when no answer came by maxWait. Brokers answer as soon as data
	// arrives, so it adds no latency; it bounds how long closing the reader waits for an
	// idle fetch (the broker's hold, 1 s here). At 250 ms the allowance was 62 ms, which a
	// busy machine overran often: every overrun closed the connection, dialled again and
	// backed off before reading on, stalling deliveries for seconds under load.
	maxWait = 2 * time.Second
	// Members learn of a rebalance (a replica joining) from a heartbeat answer, so the
	// interval is how long a joining replica waits for partitions: ~3 s with kafka-go's
	// default, ~0.5 s here. The session timeout stays above brokers' default minimum (6 s).
	heartbeatInterval = 500 * time.Millisecond
	sessionTimeout    = 10 * time.Second
	rebalanceTimeout  = 10 * time.Second
	// kafka-go waits 5 s after a failed join by default, which is what a freshly started
	// broker (coordinator not ready yet) costs every consumer.
	joinGroupBackoff = 250 * time.Millisecond
	readBackoffMin   = 50 * time.Millisecond
	readBackoffMax   = time.Second
	// partitionWatch is how often a consumer checks for added partitions or a topic that
	// did not exist when it joined.
	partitionWatch = 5 * time.Second
	maxFetchBytes  = 8 << 20
	// fetchErrorPause is the wait after the reader reports an error.
	fetchErrorPause = 250 * time.Millisecond
	// commitTimeout bounds handing a handled batch's offsets to the reader, which must
	// still happen while the consumer is shutting down: the reader commits them at close,
	// so the batch is not handled twice.
	commitTimeout = 5 * time.Second
	// commitEvery is how often the offsets of handled messages are committed, all of them
	// in one request, and once more when the consumer stops. Committing each batch before
	// fetching the next cost a round trip to the broker per message on the consumers of
	// status events (every run sends several, and three services follow them): a tenth of
	// the standalone process's CPU at its submit ceiling, and a wait in every consumer's
	// loop. A consumer killed meanwhile has its last commitEvery of messages delivered
	// again, which handlers take as they take any message delivered twice.
	commitEvery = 100 * time.Millisecond
)

// Handler handles one event. Returning nil commits the message; an error is retried (unless it
// wraps ErrPermanent) and finally dead-lettered. A Handler must be idempotent: after a crash
// or a rebalance the same event can arrive again, with the same id.
type Handler func(ctx context.Context, e event.Event) error

// ConsumerOptions configures a Consumer.
type ConsumerOptions struct {
	// GroupID is the consumer group; replicas of a service share it and split the partitions.
	GroupID string
	// Topic is the unprefixed topic name, e.g. events.TaskDispatch.
	Topic string
	// Handler is called for every event in partition order: one at a time, or with
	// Concurrency, events of different keys at once and those of one key in order.
	Handler Handler
	// Concurrency is how many events are handled at once; 0 or 1 means one at a time.
	// Above 1 the consumer takes what has arrived (up to Concurrency messages) as a batch,
	// handles its keys side by side, each key's messages in order, and commits the batch
	// once all of it is settled.
	Concurrency int
	// MaxAttempts is how many times Handler is tried per message; 0 means 5.
	MaxAttempts int
	// Backoff is the wait after the first failed attempt, doubled after each further one;
	// 0 means 100 ms.
	Backoff time.Duration
	// MaxBackoff caps the wait between attempts; 0 means 30 s.
	MaxBackoff time.Duration
	// Types, when set, are the event types Handler is given: a message whose type header
	// names another is committed without being decoded. (Messages without the header, from
	// producers other than Producer, are decoded and handed over as ever.)
	Types []string
	// FromNewest has a group with no committed offset start at the topic's end rather
	// than its beginning: for a group of one replica's own (its name new at each start),
	// which cares only for what is published from now on, and would otherwise read the
	// topic's whole retention at each start.
	FromNewest bool
	// DisableDeadLetter drops (logs and commits) a message that still fails after
	// MaxAttempts instead of writing it to the topic's dead-letter topic.
	DisableDeadLetter bool
	// Logger receives retries, dead letters and kafka-go's own messages; nil means
	// slog.Default().
	Logger *slog.Logger
	// GroupLabel names the group in the metrics; default GroupID. A group of a replica's
	// own (GroupID holding the replica's name) sets one without it, so that a restart
	// under a new name makes no new series.
	GroupLabel string
}

// Consumer reads one topic as a member of a consumer group and hands each event to a Handler,
// committing its offset only once the event is handled or dead-lettered.
type Consumer struct {
	cfg    Config
	opts   ConsumerOptions
	topic  string
	log    *slog.Logger
	tracer trace.Tracer
	// gatherWait, when set, is how long a batch waits for messages after its first (see
	// gather); tests that need a batch to hold messages of several partitions set it.
	gatherWait time.Duration
	metrics    *consumerMetrics
}

// NewConsumer returns a Consumer; Run starts it.
func NewConsumer(cfg Config, opts ConsumerOptions) *Consumer {
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = defaultMaxAttempts
	}
	if opts.Backoff <= 0 {
		opts.Backoff = defaultBackoff
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = defaultMaxBackoff
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	topic := cfg.Topic(opts.Topic)
	group := opts.GroupLabel
	if group == "" {
		group = opts.GroupID
	}
	return &Consumer{
		cfg:     cfg,
		opts:    opts,
		topic:   topic,
		log:     opts.Logger.With("topic", topic, "group", opts.GroupID),
		tracer:  cfg.tracer(),
		metrics: newConsumerMetrics(cfg, opts.Topic, group),
	}
}

// Run joins the group and handles messages until ctx ends, then leaves the group and returns
// nil. A message being handled when ctx ends is not committed, so the group gets it again.
// Broker errors are logged and retried; Run returns an error only for invalid options.
func (c *Consumer) Run(ctx context.Context) error {
	if err := c.validate(); err != nil {
		return err
	}
	reader := kafka.NewReader(c.readerConfig())
	dlq := c.deadLetterWriter()
	defer c.metrics.follow(c.cfg, reader)()
	defer func() {
		// Closing the reader leaves the group, so the partitions move to other members
		// now rather than after the session timeout.
		if err := reader.Close(); err != nil {
			c.log.Warn("close kafka reader", "err", err)
		}
		if dlq != nil {
			if err := dlq.Close(); err != nil {
				c.log.Warn("close dead-letter writer", "err", err)
			}
			dlq.Transport.(*kafka.Transport).CloseIdleConnections()
		}
	}()

	for {
		m, err := reader.FetchMessage(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			// kafka-go keeps reconnecting on its own, with its own backoff; these are
			// reports, not the end. The pause only guards against a tight loop.
			c.log.Warn("fetch from kafka", "err", err)
			if !sleepCtx(ctx, fetchErrorPause) {
				return nil
			}
			continue
		}
		batch := c.gather(ctx, reader, m)
		if !c.processAll(ctx, batch, dlq) {
			return nil // ctx ended before the batch was settled: leave it uncommitted.
		}
		c.metrics.consumed.Add(ctx, int64(len(batch)), c.metrics.attrs)
		// Handed to the reader, which commits them with the others of its next commitEvery.
		commitCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
		err = reader.CommitMessages(commitCtx, batch...)
		cancel()
		if err != nil {
			// The messages will be delivered again (to this or another member); handlers
			// are idempotent, so that costs only time.
			c.log.Warn("commit offset", "partition", m.Partition, "offset", m.Offset, "err", err)
		}
	}
}

// gather adds to first the messages the reader holds already, up to Concurrency in all:
// a batch takes what has arrived and waits for nothing more, so a message alone is handled
// at once, with no delay for company that may not come. With gatherWait set (tests that
// need a batch to hold messages of several partitions), it waits that long for more.
func (c *Consumer) gather(ctx context.Context, reader *kafka.Reader, first kafka.Message) []kafka.Message {
	batch := []kafka.Message{first}
	if c.opts.Concurrency <= 1 {
		return batch
	}
	if c.gatherWait > 0 {
		// (A context that has already ended would not do here: the reader may pick it over
		// a message it holds.)
		wait, cancel := context.WithTimeout(ctx, c.gatherWait)
		defer cancel()
		for len(batch) < c.opts.Concurrency {
			m, err := reader.FetchMessage(wait)
			if err != nil {
				break
			}
			batch = append(batch, m)
		}
		return batch
	}
	// Held ones come at once; the bound only guards against one taken away meanwhile (a
	// rebalance).
	held, cancel := context.WithTimeout(ctx, heldFetch)
	defer cancel()
	for len(batch) < c.opts.Concurrency && reader.Stats().QueueLength > 0 {
		m, err := reader.FetchMessage(held)
		if err != nil {
			break
		}
		batch = append(batch, m)
	}
	return batch
}

// heldFetch bounds the fetch of a message the reader said it holds.
const heldFetch = 100 * time.Millisecond

// processAll settles a batch: each key's messages in order, the keys side by side. It
// reports false when ctx ended before all were settled.
func (c *Consumer) processAll(ctx context.Context, batch []kafka.Message, dlq *kafka.Writer) bool {
	if len(batch) == 1 {
		return c.process(ctx, batch[0], dlq)
	}
	byKey := map[string][]kafka.Message{}
	var keys []string
	for _, m := range batch {
		k := string(m.Key)
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], m)
	}
	var wg sync.WaitGroup
	var unsettled atomic.Bool
	for _, k := range keys {
		wg.Go(func() {
			for _, m := range byKey[k] {
				if !c.process(ctx, m, dlq) {
					unsettled.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	return !unsettled.Load()
}

func (c *Consumer) validate() error {
	if err := c.cfg.validate(); err != nil {
		return err
	}
	switch {
	case c.opts.GroupID == "":
		return errors.New("kafkax: consumer needs a GroupID")
	case c.opts.Topic == "":
		return errors.New("kafkax: consumer needs a Topic")
	case c.opts.Handler == nil:
		return errors.New("kafkax: consumer needs a Handler")
	}
	return nil
}

func (c *Consumer) startOffset() int64 {
	if c.opts.FromNewest {
		return kafka.LastOffset
	}
	return kafka.FirstOffset
}

func (c *Consumer) readerConfig() kafka.ReaderConfig {
	return kafka.ReaderConfig{
		Brokers:                c.cfg.Brokers,
		GroupID:                c.opts.GroupID,
		Topic:                  c.topic,
		Dialer:                 c.cfg.dialer(),
		MaxBytes:               maxFetchBytes,
		MaxWait:                maxWait,
		CommitInterval:         commitEvery,
		StartOffset:            c.startOffset(),
		HeartbeatInterval:      heartbeatInterval,
		SessionTimeout:         sessionTimeout,
		RebalanceTimeout:       rebalanceTimeout,
		JoinGroupBackoff:       joinGroupBackoff,
		ReadBackoffMin:         readBackoffMin,
		ReadBackoffMax:         readBackoffMax,
		WatchPartitionChanges:  true,
		PartitionWatchInterval: partitionWatch,
		// kafka-go logs every reconnect attempt; Run reports the errors that reach it.
		Logger:      kafkaLogger(c.log, slog.LevelDebug),
		ErrorLogger: kafkaLogger(c.log, slog.LevelDebug),
	}
}

func (c *Consumer) deadLetterWriter() *kafka.Writer {
	if c.opts.DisableDeadLetter {
		return nil
	}
	return &kafka.Writer{
		Addr:                   kafka.TCP(c.cfg.Brokers...),
		Topic:                  events.DeadLetter(c.topic),
		Balancer:               &kafka.Hash{},
		RequiredAcks:           kafka.RequireAll,
		BatchTimeout:           batchTimeout,
		AllowAutoTopicCreation: true,
		Transport:              &kafka.Transport{ClientID: c.cfg.ClientID, DialTimeout: dialTimeout},
	}
}

// process handles m until it is settled: handled, dead-lettered or dropped. It reports false
// when ctx ended first, in which case m must not be committed.
func (c *Consumer) process(ctx context.Context, m kafka.Message, dlq *kafka.Writer) bool {
	headers := HeaderCarrier(m.Headers)
	if !c.wants(headers) {
		// Settled as handled, without a trace: most status events reach consumers that
		// take a few of their types, and a span for each of the others cost more than
		// skipping it.
		return true
	}
	ctx = c.cfg.propagator().Extract(ctx, &headers)
	ctx, span := c.tracer.Start(ctx, "process "+c.topic,
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(
			semconv.MessagingSystemKafka,
			semconv.MessagingOperationTypeProcess,
			semconv.MessagingDestinationName(c.topic),
			semconv.MessagingConsumerGroupName(c.opts.GroupID),
			semconv.MessagingDestinationPartitionID(strconv.Itoa(m.Partition)),
			semconv.MessagingKafkaOffset(int(m.Offset)),
			semconv.MessagingKafkaMessageKey(string(m.Key)),
			semconv.MessagingMessageID(headers.Get(HeaderEventID)),
		))
	defer span.End()

	attempts, err := c.handle(ctx, m)
	if err == nil {
		return true
	}
	if ctx.Err() != nil {
		span.SetStatus(codes.Error, "consumer stopped before the message was handled")
		return false
	}
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
	log := c.log.With("partition", m.Partition, "offset", m.Offset,
		"event_id", headers.Get(HeaderEventID), "event_type", headers.Get(HeaderEventType),
		"attempts", attempts, "err", err)
	if dlq == nil {
		log.Error("dropping message that could not be handled")
		return true
	}
	// The message is only committed once the dead-letter copy is acknowledged, so keep
	// trying while the broker is unreachable rather than lose it.
	for try := 1; ; try++ {
		dlErr := dlq.WriteMessages(ctx, c.deadLetter(m, attempts, err))
		if dlErr == nil {
			log.Error("message dead-lettered", "dlq", dlq.Topic)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		log.Warn("write dead letter", "dlq", dlq.Topic, "dlq_err", dlErr)
		if !sleepCtx(ctx, backoff(c.opts.Backoff, c.opts.MaxBackoff, try)) {
			return false
		}
	}
}

// wants reports whether a message with headers is of a type the handler takes (Types):
// its type header says so before the message is decoded.
func (c *Consumer) wants(headers HeaderCarrier) bool {
	if len(c.opts.Types) == 0 {
		return true
	}
	t := headers.Get(HeaderEventType)
	return t == "" || slices.Contains(c.opts.Types, t)
}

// handle decodes m and runs the handler with retries. It returns the number of attempts made
// and the last error.
func (c *Consumer) handle(ctx context.Context, m kafka.Message) (int, error) {
	e, err := events.Unmarshal(m.Value)
	if err != nil {
		return 0, Permanent(err)
	}
	for attempt := 1; ; attempt++ {
		err = c.call(ctx, e)
		if err == nil || ctx.Err() != nil || errors.Is(err, ErrPermanent) || attempt >= c.opts.MaxAttempts {
			return attempt, err
		}
		wait := backoff(c.opts.Backoff, c.opts.MaxBackoff, attempt)
		c.log.Warn("handler failed, retrying", "partition", m.Partition, "offset", m.Offset,
			"event_id", e.ID(), "attempt", attempt, "retry_in", wait, "err", err)
		if !sleepCtx(ctx, wait) {
			return attempt, ctx.Err()
		}
	}
}

// call runs the handler, turning a panic into an error so one bad event cannot take the
// service down; the message is retried and then dead-lettered like any failure.
func (c *Consumer) call(ctx context.Context, e event.Event) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("handler panicked: %v", r)
		}
	}()
	return c.opts.Handler(ctx, e)
}

func (c *Consumer) deadLetter(m kafka.Message, attempts int, cause error) kafka.Message {
	// Copy the headers: Set must not write through to the fetched message's slice.
	headers := make(HeaderCarrier, len(m.Headers), len(m.Headers)+6)
	copy(headers, m.Headers)
	headers.Set(HeaderDLQError, cause.Error())
	headers.Set(HeaderDLQTopic, m.Topic)
	headers.Set(HeaderDLQPartition, strconv.Itoa(m.Partition))
	headers.Set(HeaderDLQOffset, strconv.FormatInt(m.Offset, 10))
	headers.Set(HeaderDLQGroup, c.opts.GroupID)
	headers.Set(HeaderDLQAttempts, strconv.Itoa(attempts))
	return kafka.Message{Key: m.Key, Value: m.Value, Headers: headers}
}

// backoff is the wait after the n-th failure (n ≥ 1): base doubled n-1 times, capped.
func backoff(base, maxWait time.Duration, n int) time.Duration {
	d := base
	for i := 1; i < n && d < maxWait; i++ {
		d *= 2
	}
	return min(d, maxWait)
}

// sleepCtx waits for d and reports whether ctx is still live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
