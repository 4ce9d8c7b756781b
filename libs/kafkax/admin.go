package kafkax

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/baton-flow/baton/libs/events"
)

// maxReplicationFactor is the replication EnsureTopics asks for when the cluster has enough
// brokers; with acks=all it lets one broker fail without losing acknowledged messages.
const maxReplicationFactor = 3

// EnsureTopics creates the unprefixed topics names, each with the given number of partitions,
// and their dead-letter topics, where they do not exist yet. Existing topics are left as
// they are, so every replica of every service can call it at start.
func EnsureTopics(ctx context.Context, cfg Config, partitions int, names ...string) error {
	if partitions <= 0 {
		return fmt.Errorf("ensure topics: partitions must be positive, got %d", partitions)
	}
	conn, err := dialAny(ctx, cfg)
	if err != nil {
		return fmt.Errorf("ensure topics: %w", err)
	}
	defer conn.Close()

	brokers, err := conn.Brokers()
	if err != nil {
		return fmt.Errorf("ensure topics: read brokers: %w", err)
	}
	controller, err := conn.Controller()
	if err != nil {
		return fmt.Errorf("ensure topics: find controller: %w", err)
	}
	// Topics can only be created through the controller.
	ctrl, err := cfg.dialer().DialContext(ctx, "tcp", net.JoinHostPort(controller.Host, strconv.Itoa(controller.Port)))
	if err != nil {
		return fmt.Errorf("ensure topics: dial controller %s:%d: %w", controller.Host, controller.Port, err)
	}
	defer ctrl.Close()
	setDeadline(ctx, ctrl)

	replication := min(len(brokers), maxReplicationFactor)
	configs := make([]kafka.TopicConfig, 0, 2*len(names))
	for _, name := range names {
		full := cfg.Topic(name)
		for _, topic := range []string{full, events.DeadLetter(full)} {
			configs = append(configs, kafka.TopicConfig{
				Topic:             topic,
				NumPartitions:     partitions,
				ReplicationFactor: replication,
			})
		}
	}
	if err := ctrl.CreateTopics(configs...); err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
		return fmt.Errorf("ensure topics: create: %w", err)
	}
	return nil
}

// Ping reports whether a broker answers a metadata request, for readiness checks.
func Ping(ctx context.Context, cfg Config) error {
	conn, err := dialAny(ctx, cfg)
	if err != nil {
		return fmt.Errorf("ping kafka: %w", err)
	}
	defer conn.Close()
	if _, err := conn.Brokers(); err != nil {
		return fmt.Errorf("ping kafka: read metadata: %w", err)
	}
	return nil
}

// dialAny connects to the first bootstrap broker that answers.
func dialAny(ctx context.Context, cfg Config) (*kafka.Conn, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	dialer := cfg.dialer()
	var errs []error
	for _, addr := range cfg.Brokers {
		conn, err := dialer.DialContext(ctx, "tcp", addr)
		if err != nil {
			errs = append(errs, fmt.Errorf("dial %s: %w", addr, err))
			continue
		}
		setDeadline(ctx, conn)
		return conn, nil
	}
	return nil, errors.Join(errs...)
}

// setDeadline makes conn's requests give up with ctx, or after dialTimeout if ctx has no
// deadline: kafka-go's Conn methods take no context.
func setDeadline(ctx context.Context, conn *kafka.Conn) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(dialTimeout)
	}
	_ = conn.SetDeadline(deadline)
}
