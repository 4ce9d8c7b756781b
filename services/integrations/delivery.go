package integrations

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/services/integrations/internal/app"
	"github.com/baton-flow/baton/services/integrations/internal/mongostore"
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
func newDeliveries(ctx context.Context, cfg Config, db *mongo.Database, kafka kafkax.Config, settings Settings, log *slog.Logger, now func() time.Time) ([]func(context.Context) error, error) {
	store := mongostore.NewDeliveries(db)
	if err := store.EnsureIndexes(ctx); err != nil {
		return nil, err
	}
	sender, err := sinkhttp.New()
	if err != nil {
		return nil, err
	}
	d := app.NewDeliveries(cfg.Delivery, app.DeliveryDeps{Store: store, Settings: settings, Sender: sender, Log: log, Now: now,
		NewID: func() string { return bson.NewObjectID().Hex() }, Owner: Name + "-" + bson.NewObjectID().Hex()})
	consumer := kafkax.NewConsumer(kafka, kafkax.ConsumerOptions{
		GroupID: sinksConsumer(cfg.GroupID), Topic: events.RunEvents, Handler: recordStatus(d), Logger: log,
		Concurrency: consumerConcurrency,
		// An event is recorded or it waits: the database or identity being away must not
		// send it to the dead letters, where no sink would get it.
		MaxAttempts: 1 << 30,
	})
	return []func(context.Context) error{consumer.Run, d.Run}, nil
}

// recordStatus queues each status event for the sinks.
func recordStatus(d *app.Deliveries) kafkax.Handler {
	return func(ctx context.Context, e event.Event) error {
		err := d.Record(ctx, e)
		if errors.Is(err, app.ErrMalformedEvent) {
			return kafkax.Permanent(err)
		}
		return err
	}
}
