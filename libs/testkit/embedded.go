package testkit

import (
	"context"
	"fmt"
	"os"

	"github.com/baton-flow/baton/libs/embedded"
)

func startMongoEmbedded(ctx context.Context) (string, func(), error) {
	dir, err := os.MkdirTemp("", "baton-testkit-mongo-")
	if err != nil {
		return "", nil, fmt.Errorf("data dir: %w", err)
	}
	m, err := embedded.StartMongo(ctx, embedded.MongoConfig{Dir: dir})
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, err
	}
	stop := func() {
		m.Close()
		_ = os.RemoveAll(dir)
	}
	return m.URI(), stop, nil
}

func startKafkaEmbedded() ([]string, func(), error) {
	k, err := embedded.StartKafka(embedded.KafkaConfig{})
	if err != nil {
		return nil, nil, err
	}
	return k.Brokers(), k.Close, nil
}
