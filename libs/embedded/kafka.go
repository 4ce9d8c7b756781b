package embedded

import (
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// defaultPartitions is the partition count of seeded and auto-created topics when
// KafkaConfig.Partitions is zero.
const defaultPartitions = 3

// KafkaConfig configures StartKafka.
type KafkaConfig struct {
	// Addr is the listen address, "host:port"; port 0 picks a free port. Empty means
	// "127.0.0.1:0". The broker advertises exactly this host to clients, so it must be
	// an address they can dial (not 0.0.0.0 when clients are on other machines).
	Addr string
	// Partitions is the partition count of seeded topics and of topics created
	// implicitly (metadata auto-creation, CreateTopics with -1 partitions). Default 3.
	Partitions int
	// Topics are created at start.
	Topics []string
	// Retention and RetentionBytes bound what each partition keeps, as a broker's
	// log.retention.ms and log.retention.bytes do; zero keeps everything. Kept in
	// memory, a long-lived process's messages would otherwise grow without end.
	Retention      time.Duration
	RetentionBytes int64
}

// retentionEvery is how often, at most, a broker with a retention drops what it no longer
// keeps; a short retention is applied at half its length.
const retentionEvery = 30 * time.Second

// retentionSegment is the size of a partition's segments under a retention.
const retentionSegment = 1 << 20

// Kafka is a running in-memory, single-broker Kafka-compatible cluster (franz-go kfake).
// Messages live in memory only: a restart loses them.
//
// Like a broker with auto.create.topics.enable=true, it creates a missing topic (with
// KafkaConfig.Partitions partitions) on any metadata request naming it: a kafka-go Writer
// with AllowAutoTopicCreation, kafka.Conn.ReadPartitions, and a consumer-group Reader
// all do, so a Reader may start before its topic exists.
type Kafka struct {
	cluster *kfake.Cluster
	brokers []string
	stop    chan struct{}
	// mu keeps Close from cutting a round of retention short: kfake waits forever on a
	// request to a cluster that has stopped.
	mu     sync.Mutex
	closed bool
}

// StartKafka starts the broker; it accepts connections when StartKafka returns.
func StartKafka(cfg KafkaConfig) (*Kafka, error) {
	addr := cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("start kafka: address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("start kafka: address %q: bad port", addr)
	}
	partitions := cfg.Partitions
	if partitions <= 0 {
		partitions = defaultPartitions
	}

	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.Ports(port),
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(partitions),
		// kfake always listens on 127.0.0.1; honour the configured host instead.
		kfake.ListenFn(func(network, address string) (net.Listener, error) {
			_, p, err := net.SplitHostPort(address)
			if err != nil {
				return nil, err
			}
			return net.Listen(network, net.JoinHostPort(host, p))
		}),
	}
	if len(cfg.Topics) > 0 {
		opts = append(opts, kfake.SeedTopics(int32(partitions), cfg.Topics...))
	}
	retention := map[string]string{}
	if cfg.Retention > 0 {
		retention["log.retention.ms"] = strconv.FormatInt(cfg.Retention.Milliseconds(), 10)
	}
	if cfg.RetentionBytes > 0 {
		retention["log.retention.bytes"] = strconv.FormatInt(cfg.RetentionBytes, 10)
	}
	if len(retention) > 0 {
		// Memory is given back a whole segment at a time (100 MiB by default): small
		// segments let go of what the retention drops soon after.
		retention["log.segment.bytes"] = strconv.Itoa(retentionSegment)
		opts = append(opts, kfake.BrokerConfigs(retention))
	}
	cluster, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("start kafka: %w", err)
	}
	k := &Kafka{cluster: cluster, brokers: cluster.ListenAddrs(), stop: make(chan struct{})}
	if len(retention) > 0 {
		// kfake applies broker-wide retention only when asked: its own cleaner runs for
		// topics with a retention of their own.
		every := retentionEvery
		if cfg.Retention > 0 {
			every = min(every, cfg.Retention/2)
		}
		go k.retain(every)
	}
	return k, nil
}

func (k *Kafka) retain(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-t.C:
			k.mu.Lock()
			if !k.closed {
				k.cluster.ApplyRetention()
			}
			k.mu.Unlock()
		}
	}
}

// Brokers returns the bootstrap addresses ("host:port") of the cluster.
func (k *Kafka) Brokers() []string { return append([]string(nil), k.brokers...) }

// Close stops the broker and drops all its data. It is safe to call more than once.
func (k *Kafka) Close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return
	}
	k.closed = true
	close(k.stop)
	k.cluster.Close()
}
