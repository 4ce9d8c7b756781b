package httpx

import (
	"context"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.12.0"
	"go.opentelemetry.io/otel/trace"
)

// The request metrics' families, named and labelled as OpenTelemetry's HTTP semantic
// conventions of v1.12 name them (and gofiber's otelfiber did, which the dashboards were
// written against): http_server_duration_milliseconds and the others on /metrics.
const (
	metricDuration       = "http.server.duration"
	metricRequestSize    = "http.server.request.size"
	metricResponseSize   = "http.server.response.size"
	metricActiveRequests = "http.server.active_requests"
)

// observer traces and measures each request: a server span named by its operation (the
// trace it continues taken from its traceparent header, and given back in the answer's),
// and the four HTTP families labelled by the pattern of the route the app matched (a
// catch-all such as the gateway's is one route: its operations are counted by the
// services), method, status, scheme, flavor and service. It does per request only what a request needs: the span's attributes are
// built only for a span that records (sampled), and each label set is built once and
// kept, the labels being bounded (a route is a pattern of the app's routes, a method one
// Fiber knows, a status a number).
type observer struct {
	name        string
	tracer      trace.Tracer
	propagators propagation.TextMapPropagator

	duration     metric.Float64Histogram
	requestSize  metric.Int64Histogram
	responseSize metric.Int64Histogram
	active       metric.Int64UpDownCounter

	sets sync.Map // labelKey → metric.MeasurementOption
}

// labelKey is what a request's labels are made of.
type labelKey struct {
	method, scheme, route string
	http11                bool
	status                int // 0 for the in-flight gauge, which has no route or status
}

func newObserver(name string, meter metric.MeterProvider) *observer {
	m := meter.Meter(tracerName)
	o := &observer{
		name:        name,
		tracer:      otel.GetTracerProvider().Tracer(tracerName),
		propagators: otel.GetTextMapPropagator(),
	}
	var errs [4]error
	o.duration, errs[0] = m.Float64Histogram(metricDuration, metric.WithUnit("ms"),
		metric.WithDescription("The duration of inbound HTTP requests."))
	o.requestSize, errs[1] = m.Int64Histogram(metricRequestSize, metric.WithUnit("By"),
		metric.WithDescription("The size of inbound HTTP request bodies."))
	o.responseSize, errs[2] = m.Int64Histogram(metricResponseSize, metric.WithUnit("By"),
		metric.WithDescription("The size of HTTP response bodies."))
	o.active, errs[3] = m.Int64UpDownCounter(metricActiveRequests, metric.WithUnit("1"),
		metric.WithDescription("The inbound HTTP requests in flight."))
	for _, err := range errs {
		if err != nil {
			otel.Handle(err)
		}
	}
	return o
}

// labels answers the label set of k, built the first time it is asked for.
func (o *observer) labels(k labelKey) metric.MeasurementOption {
	if set, ok := o.sets.Load(k); ok {
		return set.(metric.MeasurementOption)
	}
	kv := []attribute.KeyValue{
		flavor(k.http11),
		semconv.HTTPMethodKey.String(k.method),
		semconv.HTTPSchemeKey.String(k.scheme),
		semconv.HTTPServerNameKey.String(o.name),
	}
	if k.status != 0 {
		kv = append(kv, semconv.HTTPStatusCodeKey.Int(k.status), semconv.HTTPRouteKey.String(k.route))
	}
	set, _ := o.sets.LoadOrStore(k, metric.WithAttributeSet(attribute.NewSet(kv...)))
	return set.(metric.MeasurementOption)
}

func flavor(http11 bool) attribute.KeyValue {
	if http11 {
		return semconv.HTTPFlavorHTTP11
	}
	return semconv.HTTPFlavorHTTP10
}

// handle is the middleware.
func (o *observer) handle(c *fiber.Ctx) error {
	if unobserved[c.Path()] {
		return c.Next()
	}
	start := time.Now()
	parent, cancel := context.WithCancel(c.UserContext())
	defer cancel()
	key := labelKey{method: c.Method(), scheme: c.Protocol(), http11: c.Request().Header.IsHTTP11()}
	inFlight := o.labels(key)
	o.active.Add(parent, 1, inFlight)
	// Deferred, so that nothing stays in flight whatever happens below.
	defer o.active.Add(parent, -1, inFlight)

	ctx := o.propagators.Extract(parent, requestCarrier{&c.Request().Header})
	ctx, span := o.tracer.Start(ctx, c.Method(), trace.WithSpanKind(trace.SpanKindServer))
	defer span.End()
	if span.IsRecording() {
		span.SetAttributes(o.requestAttributes(c)...)
	}
	c.SetUserContext(ctx)
	if err := c.Next(); err != nil {
		span.RecordError(err)
		// The app's error handler writes the answer now, so that its status is the one
		// measured.
		_ = c.App().Config().ErrorHandler(c, err)
	}

	status := c.Response().StatusCode()
	key.route, key.status = c.Route().Path, status
	done := o.labels(key)
	requestSize, responseSize := int64(len(c.Request().Body())), int64(len(c.Response().Body()))
	o.duration.Record(parent, float64(time.Since(start).Microseconds())/1000, done)
	o.requestSize.Record(parent, requestSize, done)
	o.responseSize.Record(parent, responseSize, done)

	if span.IsRecording() {
		span.SetName(c.Method() + " " + spanRoute(c))
		span.SetAttributes(semconv.HTTPStatusCodeKey.Int(status), semconv.HTTPRouteKey.String(key.route),
			semconv.HTTPResponseContentLengthKey.Int64(responseSize))
		if status >= 500 {
			span.SetStatus(codes.Error, "")
		}
	}
	o.propagators.Inject(ctx, responseCarrier{&c.Response().Header})
	c.SetUserContext(parent)
	return nil
}

// requestAttributes are a recorded span's attributes of the request, its target and URL
// with their query tokens masked (RedactedURI): spans are exported as logs are.
func (o *observer) requestAttributes(c *fiber.Ctx) []attribute.KeyValue {
	h := &c.Request().Header
	uri := RedactedURI(c.Path(), c.Request().URI().QueryString())
	kv := []attribute.KeyValue{
		flavor(h.IsHTTP11()),
		semconv.HTTPMethodKey.String(c.Method()),
		semconv.HTTPRequestContentLengthKey.Int(h.ContentLength()),
		semconv.HTTPSchemeKey.String(c.Protocol()),
		semconv.HTTPTargetKey.String(uri),
		semconv.HTTPURLKey.String(uri),
		semconv.HTTPUserAgentKey.String(string(h.UserAgent())),
		semconv.NetHostNameKey.String(c.Hostname()),
		semconv.NetTransportTCP,
		semconv.HTTPServerNameKey.String(o.name),
	}
	if ip := c.IP(); ip != "" {
		kv = append(kv, semconv.HTTPClientIPKey.String(ip))
	}
	return kv
}

// spanRoute is the operation a request's span is named by: the route SpanRoute named, else
// the pattern of the route the app matched, never its path.
func spanRoute(c *fiber.Ctx) string {
	if r, _ := c.Locals(localSpanRoute).(string); r != "" {
		return r
	}
	return c.Route().Path
}

// requestCarrier reads the trace context of a request's headers in place.
type requestCarrier struct{ h *fasthttp.RequestHeader }

func (r requestCarrier) Get(key string) string { return string(r.h.Peek(key)) }
func (requestCarrier) Set(string, string)      {}
func (r requestCarrier) Keys() []string {
	var keys []string
	r.h.VisitAll(func(k, _ []byte) { keys = append(keys, string(k)) })
	return keys
}

// responseCarrier writes the trace context into an answer's headers.
type responseCarrier struct{ h *fasthttp.ResponseHeader }

func (responseCarrier) Get(string) string       { return "" }
func (r responseCarrier) Set(key, value string) { r.h.Set(key, value) }
func (responseCarrier) Keys() []string          { return nil }
