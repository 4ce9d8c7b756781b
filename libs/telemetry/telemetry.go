// Package telemetry sets up OpenTelemetry for a Baton process: a tracer provider (exporting
// over OTLP/HTTP when an endpoint is configured), a meter provider read by a Prometheus
// endpoint, the W3C propagators, and JSON logs that carry trace IDs.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// Config says what to call the process and where to send traces.
type Config struct {
	// ServiceName is the `service.name` resource attribute.
	ServiceName string
	// Version is the `service.version` attribute.
	Version string
	// OTLPEndpoint is an OTLP/HTTP base URL ("http://otel-collector:4318"), read as
	// OTEL_EXPORTER_OTLP_ENDPOINT is: spans go to its path with /v1/traces appended, unless
	// the path already ends in /v1/traces (TracesURL). Empty records no span (requests still
	// get trace IDs).
	OTLPEndpoint string
	// SpanProcessor, when set, is given every span, and every span is then recorded
	// (sampled), whether or not an OTLP endpoint is set: an in-memory exporter's
	// (go.opentelemetry.io/otel/sdk/trace/tracetest) in a process's tests.
	SpanProcessor sdktrace.SpanProcessor
	// Disabled turns tracing and the OpenTelemetry metrics off, as OTEL_SDK_DISABLED=true
	// does for every OpenTelemetry SDK: no span is made or recorded (a traceparent that
	// comes in still goes on with the work it asks for), and /metrics serves the Go
	// runtime's and the process's families only.
	Disabled bool
}

// Telemetry owns the process's providers.
type Telemetry struct {
	tracer   *sdktrace.TracerProvider
	meter    *sdkmetric.MeterProvider
	registry *prometheus.Registry
	// off is Config.Disabled.
	off bool
}

// Setup creates the providers and installs them, with the TraceContext and Baggage
// propagators, as the process globals: OTel's default global propagator does nothing.
func Setup(ctx context.Context, cfg Config) (*Telemetry, error) {
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		semconv.ServiceName(cfg.ServiceName), semconv.ServiceVersion(cfg.Version)))
	if err != nil {
		return nil, fmt.Errorf("telemetry resource: %w", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(
		propagation.TraceContext{}, propagation.Baggage{}))
	if cfg.Disabled {
		otel.SetTracerProvider(tracenoop.NewTracerProvider())
		otel.SetMeterProvider(metricnoop.NewMeterProvider())
		return &Telemetry{registry: reg, off: true}, nil
	}
	topts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if cfg.OTLPEndpoint != "" {
		target, err := TracesURL(cfg.OTLPEndpoint)
		if err != nil {
			return nil, err
		}
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(target))
		if err != nil {
			return nil, fmt.Errorf("otlp exporter for %s: %w", cfg.OTLPEndpoint, err)
		}
		topts = append(topts, sdktrace.WithBatcher(exp))
	}
	if cfg.SpanProcessor != nil {
		topts = append(topts, sdktrace.WithSpanProcessor(cfg.SpanProcessor), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	} else if cfg.OTLPEndpoint == "" {
		// Nothing would read a recorded span: spans still carry trace and span IDs (for the
		// logs, the answers and the propagated traceparent) without their attributes and
		// timings being kept. A caller that asked for its trace to be sampled is recorded.
		topts = append(topts, sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.NeverSample())))
	}
	tp := sdktrace.NewTracerProvider(topts...)

	reader, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, fmt.Errorf("prometheus exporter: %w", err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(reader))

	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	return &Telemetry{tracer: tp, meter: mp, registry: reg}, nil
}

// TracesPath is the OTLP/HTTP path of traces, appended to a base endpoint.
const TracesPath = "/v1/traces"

// TracesURL is where spans are posted for the OTLP/HTTP endpoint: the URL with TracesPath
// appended to its path, as the OTLP exporter specification reads a base
// OTEL_EXPORTER_OTLP_ENDPOINT ("http://collector:4318" and "http://collector:4318/" post to
// /v1/traces, "https://gw/otlp" to /otlp/v1/traces). A URL whose path already ends in
// TracesPath names the signal's own endpoint and is used as it is. Anything but an http or
// https URL with a host is refused.
func TracesURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("otlp endpoint %q: %w", endpoint, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("otlp endpoint %q: want an http or https URL such as http://otel-collector:4318", endpoint)
	}
	path := strings.TrimRight(u.Path, "/")
	if !strings.HasSuffix(path, TracesPath) {
		path += TracesPath
	}
	u.Path, u.RawPath = path, ""
	return u.String(), nil
}

// MetricsHandler serves the Prometheus exposition of the process's metrics.
func (t *Telemetry) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{})
}

// Shutdown flushes pending spans and stops the providers.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t.tracer == nil {
		return nil
	}
	return errors.Join(t.tracer.Shutdown(ctx), t.meter.Shutdown(ctx))
}

// NewLogger returns a JSON slog logger at level whose records carry the trace and span IDs
// of the context they are logged with.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(traceHandler{slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})})
}

type traceHandler struct{ slog.Handler }

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceHandler{h.Handler.WithAttrs(attrs)}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{h.Handler.WithGroup(name)}
}
