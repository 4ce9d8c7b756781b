package cluster

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/embedded"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/host"
)

// brokerRetention bounds what the broker keeps in memory, as standalone mode does: the
// databases are the truth, and consumers have long read what it drops.
const (
	brokerRetention      = 10 * time.Minute
	brokerRetentionBytes = 64 << 20
)

// ServeStore serves the Mongo-wire store (FerretDB on SQLite, libs/embedded) on addr with
// its files in dir until ctx ends, writing its URI to out once it answers.
func ServeStore(ctx context.Context, dir, addr string, out io.Writer) error {
	m, err := embedded.StartMongo(ctx, embedded.MongoConfig{Dir: dir, Addr: addr,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	defer m.Close()
	fmt.Fprintf(out, "store serving %s from %s\n", m.URI(), dir)
	<-ctx.Done()
	return nil
}

// ServeBroker serves the Kafka-protocol broker (franz-go's kfake, libs/embedded) on addr
// until ctx ends, with Baton's topics (and their dead-letter twins) under prefix made at
// start, each with host.DefaultPartitions partitions, as a deployment's topic bootstrap
// makes them. It keeps messages in memory only.
func ServeBroker(ctx context.Context, addr, prefix string, out io.Writer) error {
	var topics []string
	for _, t := range events.AllTopics {
		topics = append(topics, events.Topic(prefix, t), events.DeadLetter(events.Topic(prefix, t)))
	}
	k, err := embedded.StartKafka(embedded.KafkaConfig{Addr: addr, Partitions: host.DefaultPartitions, Topics: topics,
		Retention: brokerRetention, RetentionBytes: brokerRetentionBytes})
	if err != nil {
		return err
	}
	defer k.Close()
	fmt.Fprintf(out, "broker serving %s, topics %s\n", strings.Join(k.Brokers(), ","), strings.Join(topics, " "))
	<-ctx.Done()
	return nil
}
