// Package host runs Baton processes: it reads the shared configuration, connects to MongoDB,
// Kafka and Consul, serves each service's Fiber app with /health, /ready and /metrics,
// registers it for discovery, and shuts everything down in order on a signal.
package host

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/telemetry"
)

// Env is the configuration every Baton process shares, read from BATON_* variables. The
// README's configuration table lists the same names and defaults.
type Env struct {
	// HTTPAddr is where a service listens (BATON_HTTP_ADDR, default 0.0.0.0:8080).
	HTTPAddr string
	// AdminAddr is the operators-only listener of /metrics (BATON_ADMIN_ADDR, default
	// 0.0.0.0:8081; "off" serves none). It is never the public port: metrics name
	// internal addresses.
	AdminAddr string
	// AdvertiseAddr is the host:port other processes use to reach this one
	// (BATON_ADVERTISE_ADDR, default the listen address, with the hostname for 0.0.0.0).
	AdvertiseAddr string
	// MongoURI (BATON_MONGO_URI, default mongodb://localhost:27017).
	MongoURI string
	// MongoDBPrefix prefixes each service's database name (BATON_MONGO_DB_PREFIX, default baton_).
	MongoDBPrefix string
	// KafkaBrokers (BATON_KAFKA_BROKERS, comma-separated, default localhost:9092).
	KafkaBrokers []string
	// TopicPrefix (BATON_KAFKA_TOPIC_PREFIX, default "baton.").
	TopicPrefix string
	// ConsulAddr enables Consul registration and discovery (BATON_CONSUL_ADDR, default none).
	ConsulAddr string
	// ServiceURLs is the static discovery table used without Consul
	// (BATON_SERVICE_URLS, "identity=http://identity:8080,workflows=http://...").
	ServiceURLs map[string][]string
	// ServiceKey signs principals between processes and runs' callback tokens
	// (BATON_SERVICE_KEY, at least 16 bytes).
	ServiceKey string
	// PreviousServiceKeys verify, and never sign, what keys replaced by ServiceKey signed
	// (BATON_SERVICE_KEY_PREVIOUS, comma-separated): callback tokens already handed out,
	// and principals from processes not yet given the new key.
	PreviousServiceKeys []string
	// OTLPEndpoint receives traces over OTLP/HTTP (BATON_OTLP_ENDPOINT, default none).
	OTLPEndpoint string
	// TelemetryOff turns tracing and the OpenTelemetry metrics off (OTEL_SDK_DISABLED=true,
	// the OpenTelemetry SDKs' own switch; default on).
	TelemetryOff bool
	// LogLevel is debug, info, warn or error (BATON_LOG_LEVEL, default info).
	LogLevel slog.Level
	// MetricLabels adds team and workflow labels to the workflow metrics
	// (BATON_METRICS_LABELS, default neither).
	MetricLabels telemetry.MetricLabels
	// ShutdownTimeout bounds the graceful shutdown (BATON_SHUTDOWN_TIMEOUT, default 20s).
	ShutdownTimeout time.Duration
	// Getenv reads service-specific variables.
	Getenv func(string) string
}

// DefaultAdminAddr is where a process serves /metrics unless BATON_ADMIN_ADDR says.
const DefaultAdminAddr = "0.0.0.0:8081"

// AdminOff as BATON_ADMIN_ADDR serves no operators' listener.
const AdminOff = "off"

// LoadEnv reads the shared configuration through getenv.
func LoadEnv(getenv func(string) string) (Env, error) {
	get := func(key, def string) string {
		if v := strings.TrimSpace(getenv(key)); v != "" {
			return v
		}
		return def
	}
	env := Env{
		HTTPAddr:      get("BATON_HTTP_ADDR", "0.0.0.0:8080"),
		AdminAddr:     get("BATON_ADMIN_ADDR", DefaultAdminAddr),
		AdvertiseAddr: get("BATON_ADVERTISE_ADDR", ""),
		MongoURI:      get("BATON_MONGO_URI", "mongodb://localhost:27017"),
		MongoDBPrefix: get("BATON_MONGO_DB_PREFIX", "baton_"),
		KafkaBrokers:  SplitList(get("BATON_KAFKA_BROKERS", "localhost:9092")),
		TopicPrefix:   get("BATON_KAFKA_TOPIC_PREFIX", "baton."),
		ConsulAddr:    get("BATON_CONSUL_ADDR", ""),
		ServiceKey:    get("BATON_SERVICE_KEY", ""),
		OTLPEndpoint:  get("BATON_OTLP_ENDPOINT", ""),
		Getenv:        getenv,
	}
	env.PreviousServiceKeys = SplitList(get("BATON_SERVICE_KEY_PREVIOUS", ""))
	var err error
	// As every OpenTelemetry SDK reads it: "true" in any case turns it off, any other
	// value leaves it on.
	env.TelemetryOff = strings.EqualFold(get("OTEL_SDK_DISABLED", ""), "true")
	if env.ServiceURLs, err = parseServiceURLs(get("BATON_SERVICE_URLS", "")); err != nil {
		return Env{}, err
	}
	if err := env.LogLevel.UnmarshalText([]byte(get("BATON_LOG_LEVEL", "info"))); err != nil {
		return Env{}, fmt.Errorf("BATON_LOG_LEVEL: %w", err)
	}
	if env.ShutdownTimeout, err = time.ParseDuration(get("BATON_SHUTDOWN_TIMEOUT", "20s")); err != nil {
		return Env{}, fmt.Errorf("BATON_SHUTDOWN_TIMEOUT: %w", err)
	}
	if env.MetricLabels, err = telemetry.ParseMetricLabels(get(telemetry.MetricLabelsEnv, "")); err != nil {
		return Env{}, err
	}
	return env, nil
}

// Flag reads the boolean variable name: false when unset, true or false as written, and an
// error naming the variable for anything else.
func Flag(getenv func(string) string, name string) (bool, error) {
	switch raw := strings.TrimSpace(getenv(name)); raw {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, fmt.Errorf("%s: want true or false, got %q", name, raw)
	}
}

// SplitList splits a comma-separated value, dropping blanks.
func SplitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func parseServiceURLs(s string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, item := range SplitList(s) {
		name, raw, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("BATON_SERVICE_URLS: %q is not name=url", item)
		}
		if _, err := url.Parse(raw); err != nil {
			return nil, fmt.Errorf("BATON_SERVICE_URLS: %q: %w", item, err)
		}
		out[strings.TrimSpace(name)] = append(out[strings.TrimSpace(name)], strings.TrimRight(strings.TrimSpace(raw), "/"))
	}
	return out, nil
}

// RandomKey returns a fresh 32-byte key, hex-encoded: standalone mode's admin token when
// none is configured.
func RandomKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random key: %w", err)
	}
	return hex.EncodeToString(b), nil
}
