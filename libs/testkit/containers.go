package testkit

import (
	"context"
	"fmt"

	"github.com/testcontainers/testcontainers-go"
	tcconsul "github.com/testcontainers/testcontainers-go/modules/consul"
	tckafka "github.com/testcontainers/testcontainers-go/modules/kafka"
	tcmongo "github.com/testcontainers/testcontainers-go/modules/mongodb"
)

// Images used in containers mode; the compose file runs the same major versions.
const (
	mongoImage  = "mongo:7"
	kafkaImage  = "confluentinc/confluent-local:7.5.0" // KRaft, as the kafka module expects
	consulImage = "hashicorp/consul:1.20"
)

// terminator stops a container (nil-safe: a failed Run may return a container that
// started but never became ready, or none). Ryuk reaps containers anyway if the test
// process dies first.
func terminator(ctr testcontainers.Container) func() {
	return func() { _ = testcontainers.TerminateContainer(ctr) }
}

func startMongoContainer(ctx context.Context) (string, func(), error) {
	ctr, err := tcmongo.Run(ctx, mongoImage)
	if err != nil {
		terminator(ctr)()
		return "", nil, err
	}
	uri, err := ctr.ConnectionString(ctx)
	if err != nil {
		terminator(ctr)()
		return "", nil, fmt.Errorf("connection string: %w", err)
	}
	return uri, terminator(ctr), nil
}

func startKafkaContainer(ctx context.Context) ([]string, func(), error) {
	ctr, err := tckafka.Run(ctx, kafkaImage, tckafka.WithClusterID("baton-test"))
	if err != nil {
		terminator(ctr)()
		return nil, nil, err
	}
	brokers, err := ctr.Brokers(ctx)
	if err != nil {
		terminator(ctr)()
		return nil, nil, fmt.Errorf("brokers: %w", err)
	}
	return brokers, terminator(ctr), nil
}

func startConsulContainer(ctx context.Context) (string, func(), error) {
	// The image runs `agent -dev -client 0.0.0.0`; the module waits for the HTTP port.
	ctr, err := tcconsul.Run(ctx, consulImage)
	if err != nil {
		terminator(ctr)()
		return "", nil, err
	}
	addr, err := ctr.ApiEndpoint(ctx)
	if err != nil {
		terminator(ctr)()
		return "", nil, fmt.Errorf("api endpoint: %w", err)
	}
	if err := waitConsulLeader(ctx, addr, "", nil); err != nil {
		terminator(ctr)()
		return "", nil, err
	}
	return addr, terminator(ctr), nil
}
