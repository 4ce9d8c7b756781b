package integrations

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.opentelemetry.io/otel/metric"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/services/integrations/internal/app"
	"github.com/baton-flow/baton/services/integrations/internal/sinkhttp"
)

// DeliveryConfig tunes the delivery of status events to the sinks of settings.
type DeliveryConfig = app.DeliveryConfig

// deliveryFromEnv reads the delivery's variables: BATON_SINK_TIMEOUT (one attempt, default
// 10s), BATON_SINK_RETRY_MAX (the longest wait between attempts, default 5m) and
// BATON_SINK_GIVE_UP_AFTER (how long an event is tried, default 24h), Go durations.
func deliveryFromEnv(getenv func(string) string) (DeliveryConfig, error) {
	var cfg DeliveryConfig
	for name, d := range map[string]*time.Duration{
		"BATON_SINK_TIMEOUT": &cfg.SendTimeout, "BATON_SINK_RETRY_MAX": &cfg.Retry.Max, "BATON_SINK_GIVE_UP_AFTER": &cfg.Retry.GiveUpAfter,
	} {
		raw := getenv(name)
		if raw == "" {
			continue
		}
		v, err := time.ParseDuration(raw)
		if err != nil || v <= 0 {
			return DeliveryConfig{}, fmt.Errorf("%s: want a positive duration such as 30s, got %q", name, raw)
		}
		*d = v
	}
	return cfg, nil
}

// sinksConsumer is the consumer group that records the status events for the sinks,
// apart from the service's other consumers so that its offsets are its own.
func sinksConsumer(groupID string) string { return groupID + "-sinks" }

// consumerConcurrency is how many runs' events the consumer records at once (each run's
// in order).
const consumerConcurrency = 32

// newDeliveries wires the delivery of status events: the consumer that records them and
// the deliverer that sends them, both to be run.
func newDeliveries(cfg Config, store app.DeliveryStore, kafka kafkax.Config, pub Producer, settings Settings, log *slog.Logger, now func() time.Time, meter metric.MeterProvider) ([]func(context.Context) error, error) {
	sender, err := sinkhttp.New()
	if err != nil {
		return nil, err
	}
	d := app.NewDeliveries(cfg.Delivery, app.DeliveryDeps{Store: store, Settings: settings, Sender: sender, Log: log, Now: now,
		NewID: func() string { return bson.NewObjectID().Hex() }, Owner: Name + "-" + bson.NewObjectID().Hex(), Meter: meter})
	said := newRecordedSayer(pub, log)
	consumer := kafkax.NewConsumer(kafka, kafkax.ConsumerOptions{
		GroupID: sinksConsumer(cfg.GroupID), Topic: events.RunEvents, Handler: recordStatus(d, said), Logger: log,
		Concurrency: consumerConcurrency,
		// An event is recorded or it waits: the database or identity being away must not
		// send it to the dead letters, where no sink would get it.
		MaxAttempts: 1 << 30,
	})
	return []func(context.Context) error{consumer.Run, d.Run, said.run}, nil
}

// recordStatus queues each status event for the sinks, and has the runs service told
// once it is.
func recordStatus(d *app.Deliveries, said *recordedSayer) kafkax.Handler {
	return func(ctx context.Context, e event.Event) error {
		err := d.Record(ctx, e)
		if errors.Is(err, app.ErrMalformedEvent) {
			return kafkax.Permanent(err)
		}
		if err == nil {
			said.recorded(e)
		}
		return err
	}
}

// recordedSayer tells the runs service which of each run's status events are recorded
// (events.TypeStatusRecorded): the numbers recorded since it last spoke, every run's in
// one publish. A publish that fails is not tried again: the runs service sends what it
// was not told of again, and its recording here says so then.
type recordedSayer struct {
	pub Producer
	log *slog.Logger

	mu   sync.Mutex
	seqs map[string][]int64
	wake chan struct{}
}

// Producer publishes events and returns once the broker has them; *kafkax.Producer is one.
type Producer interface {
	PublishMany(ctx context.Context, topic string, msgs ...kafkax.Message) error
}

func newRecordedSayer(pub Producer, log *slog.Logger) *recordedSayer {
	return &recordedSayer{pub: pub, log: log, seqs: map[string][]int64{}, wake: make(chan struct{}, 1)}
}

// recorded notes that status event e is recorded.
func (s *recordedSayer) recorded(e event.Event) {
	seq, ok := events.SeqOf(e)
	if !ok {
		return
	}
	run, ok := runOfSubject(e.Subject())
	if !ok {
		return
	}
	s.mu.Lock()
	if !slices.Contains(s.seqs[run], seq) {
		s.seqs[run] = append(s.seqs[run], seq)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// runOfSubject reads the run of a run's or task run's status event from its subject,
// "/workflowrun/<id>/…", without decoding the event's data.
func runOfSubject(subject string) (string, bool) {
	rest, ok := strings.CutPrefix(subject, "/workflowrun/")
	if !ok {
		return "", false
	}
	run, _, _ := strings.Cut(rest, "/")
	return run, run != ""
}

// sayEvery is how long the sayer gathers what was recorded before it speaks.
const sayEvery = 20 * time.Millisecond

// run speaks until ctx ends.
func (s *recordedSayer) run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.wake:
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(sayEvery):
		}
		s.mu.Lock()
		said := s.seqs
		s.seqs = map[string][]int64{}
		s.mu.Unlock()
		msgs := make([]kafkax.Message, 0, len(said))
		for run, seqs := range said {
			slices.Sort(seqs)
			e, err := events.NewStatusRecorded(run, seqs)
			if err != nil {
				s.log.Error("cannot say status events are recorded", "run", run, "error", err)
				continue
			}
			msgs = append(msgs, kafkax.Message{Key: run, Event: e})
		}
		if err := s.pub.PublishMany(ctx, events.RunEventsRecorded, msgs...); err != nil && ctx.Err() == nil {
			s.log.Warn("cannot say status events are recorded; the runs service sends them again", "runs", len(msgs), "error", err)
		}
	}
}
