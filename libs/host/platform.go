package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"

	consul "github.com/hashicorp/consul/api"
	"go.mongodb.org/mongo-driver/v2/mongo"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/startup"
	"github.com/baton-flow/baton/libs/telemetry"
)

// Platform is what a process connects to once and its services share: the Mongo client,
// the Kafka producer, discovery, the service-key signer, telemetry and the logger.
type Platform struct {
	Env       Env
	Logger    *slog.Logger
	Mongo     *mongo.Client
	Kafka     kafkax.Config
	Producer  *kafkax.Producer
	Signer    *auth.Signer
	Resolver  registry.Resolver
	Telemetry *telemetry.Telemetry
	// Static is the standalone resolver, filled as units start; nil with Consul.
	Static *registry.Static
	// Consul is the agent client when BATON_CONSUL_ADDR is set.
	Consul *consul.Client

	// adminAddr is where Serve's operators' listener listens, once it does.
	adminAddr atomic.Value
}

// AdminAddr is the address the operators' listener (/metrics) listens on, once Serve has
// started it; empty before, or when BATON_ADMIN_ADDR is "off".
func (p *Platform) AdminAddr() string {
	s, _ := p.adminAddr.Load().(string)
	return s
}

// Options adjust Connect.
type Options struct {
	// NoMongo and NoKafka skip connections a process does not need: the gateway's, the
	// runner's, or the MongoDB of a standalone process whose services all keep their data
	// in SQLite files of their own. Without a MongoDB, Database is nil and Checks has no
	// "mongo".
	NoMongo, NoKafka bool
	// SpanProcessor, when set, is given every span of the process, all of them recorded
	// (telemetry.Config): a test's in-memory exporter.
	SpanProcessor sdktrace.SpanProcessor
}

// Connect builds the Platform of a process called name from env.
func Connect(ctx context.Context, name string, env Env, opts Options) (_ *Platform, err error) {
	p := &Platform{Env: env, Logger: telemetry.NewLogger(os.Stderr, env.LogLevel).With("service", name)}
	defer func() {
		if err != nil {
			p.Close(context.WithoutCancel(ctx))
		}
	}()
	if p.Telemetry, err = telemetry.Setup(ctx, telemetry.Config{ServiceName: name, Version: Version, OTLPEndpoint: env.OTLPEndpoint,
		SpanProcessor: opts.SpanProcessor, Disabled: env.TelemetryOff}); err != nil {
		return nil, err
	}
	if env.ServiceKey == "" {
		return nil, errors.New("BATON_SERVICE_KEY is required: the secret Baton's processes share to trust each other")
	}
	previous := make([][]byte, len(env.PreviousServiceKeys))
	for i, k := range env.PreviousServiceKeys {
		previous[i] = []byte(k)
	}
	if p.Signer, err = auth.NewSigner([]byte(env.ServiceKey), previous...); err != nil {
		return nil, fmt.Errorf("BATON_SERVICE_KEY or BATON_SERVICE_KEY_PREVIOUS: %w", err)
	}
	if env.ConsulAddr != "" {
		if p.Consul, err = registry.NewConsulClient(env.ConsulAddr); err != nil {
			return nil, err
		}
		p.Resolver = registry.NewConsulResolver(p.Consul, 0)
	} else {
		p.Static = registry.NewStatic(env.ServiceURLs)
		p.Resolver = p.Static
	}
	if !opts.NoMongo {
		// The store may be starting beside this process, or too loaded to answer at once.
		err = startup.Do(ctx, p.Logger, "connect to MongoDB", func(ctx context.Context) error {
			c, err := mongox.Connect(ctx, env.MongoURI)
			p.Mongo = c
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	if !opts.NoKafka {
		p.Kafka = kafkax.Config{Brokers: env.KafkaBrokers, TopicPrefix: env.TopicPrefix, ClientID: "baton-" + name,
			MeterProvider: p.Telemetry.MeterProvider()}
		err = startup.Do(ctx, p.Logger, "ensure Kafka's topics", func(ctx context.Context) error {
			return kafkax.EnsureTopics(ctx, p.Kafka, DefaultPartitions, events.AllTopics...)
		})
		if err != nil {
			return nil, err
		}
		p.Producer = kafkax.NewProducer(p.Kafka)
	}
	return p, nil
}

// DefaultPartitions is the partition count of topics Baton creates itself; deployments
// that create topics beforehand choose their own.
const DefaultPartitions = 6

// Version is the build's version, set with -ldflags "-X .../host.Version=...".
var Version = "dev"

// Database returns the service's own database, or nil when the process connects to no
// MongoDB (Options.NoMongo): a service given none keeps its data in a store of its own, or
// refuses to start.
func (p *Platform) Database(service string) *mongo.Database {
	if p.Mongo == nil {
		return nil
	}
	return p.Mongo.Database(p.Env.MongoDBPrefix + service)
}

// Checks returns the readiness checks of a service using this platform: its database and
// its broker must be reachable. What the process does not connect to is not checked.
func (p *Platform) Checks() map[string]func(context.Context) error {
	checks := map[string]func(context.Context) error{}
	if p.Mongo != nil {
		checks["mongo"] = func(ctx context.Context) error { return mongox.Ping(ctx, p.Mongo) }
	}
	if p.Producer != nil {
		checks["kafka"] = func(ctx context.Context) error { return kafkax.Ping(ctx, p.Kafka) }
	}
	return checks
}

// Close releases what Connect opened, last opened first, after the services have stopped.
func (p *Platform) Close(ctx context.Context) {
	if p.Producer != nil {
		if err := p.Producer.Close(); err != nil {
			p.Logger.Error("close kafka producer", "error", err)
		}
	}
	if p.Mongo != nil {
		if err := p.Mongo.Disconnect(ctx); err != nil {
			p.Logger.Error("disconnect mongo", "error", err)
		}
	}
	if p.Telemetry != nil {
		if err := p.Telemetry.Shutdown(ctx); err != nil {
			p.Logger.Error("flush telemetry", "error", err)
		}
	}
}
