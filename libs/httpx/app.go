// Package httpx builds the Fiber apps of Baton's services and gateway: recover, request IDs,
// body limits, tracing, the one error handler writing the contract's error body, and the
// parsing of paging, sorting, label and list query parameters.
package httpx

import (
	"log/slog"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/gofiber/fiber/v2/middleware/requestid"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/jsonbody"
)

// Body size limits from the contract.
const (
	// DefaultBodyLimit bounds ordinary request bodies.
	DefaultBodyLimit = 1 << 20
	// LargeBodyLimit bounds workflow, template and canvas bodies (a 10,000-task workflow fits).
	LargeBodyLimit = 16 << 20
)

// HeaderRequestID carries the request ID from the gateway to services and back to callers.
const HeaderRequestID = "X-Request-ID"

// Config shapes an app.
type Config struct {
	// Name is the service name, used in spans and logs.
	Name string
	// BodyLimit is the largest accepted body; DefaultBodyLimit when zero.
	BodyLimit int
	// HeaderLimit bounds the request line and headers together (431 beyond), and half of
	// it the request URI (414 beyond); HeaderLimit when zero.
	HeaderLimit int
	// ReadTimeout, WriteTimeout and IdleTimeout bound connections so shutdown can finish;
	// defaults 30s, 60s and 60s.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// Logger receives internal errors.
	Logger *slog.Logger
	// NoTracing leaves out the tracing and request metrics (benchmarks of the bare proxy).
	NoTracing bool
	// Meter makes the request metrics' instruments; nil takes the global provider. A
	// process gives its own, which a test process starting several instances keeps apart.
	Meter metric.MeterProvider
}

// unobserved are paths that neither get spans nor request metrics: probes and scrapes.
var unobserved = map[string]bool{"/health": true, "/ready": true, "/metrics": true}

// NewApp returns a Fiber app with Baton's middleware and error handler.
func NewApp(cfg Config) *fiber.App {
	if cfg.BodyLimit == 0 {
		cfg.BodyLimit = DefaultBodyLimit
	}
	if cfg.HeaderLimit == 0 {
		cfg.HeaderLimit = HeaderLimit
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	errorHandler := ErrorHandler(cfg.Logger)
	app := fiber.New(fiber.Config{
		AppName:        cfg.Name,
		BodyLimit:      cfg.BodyLimit,
		ReadBufferSize: cfg.HeaderLimit,
		ReadTimeout:    orDefault(cfg.ReadTimeout, 30*time.Second),
		WriteTimeout:   orDefault(cfg.WriteTimeout, 60*time.Second),
		IdleTimeout:    orDefault(cfg.IdleTimeout, 60*time.Second),
		ErrorHandler:   errorHandler,
		// No proxy in front is trusted: X-Forwarded-* from clients never change what
		// c.IP(), c.Protocol() or c.Hostname() report.
		EnableTrustedProxyCheck: true,
		DisableStartupMessage:   true,
		// Values from Ctx (params, queries, headers) are copies, not views of a buffer
		// fasthttp reuses for the next request: services keep them past the handler (a
		// run in flight keeps its team's name).
		Immutable: true,
	})
	// The tracer is the one the tracing middleware takes now, so that both answer to the
	// same provider for the app's life.
	tracer := otel.GetTracerProvider().Tracer(tracerName)
	app.Server().ErrorHandler = readErrorHandler(app, errorHandler, tracer, cfg.HeaderLimit)
	app.Use(requestid.New(requestid.Config{Header: HeaderRequestID}))
	if !cfg.NoTracing {
		meter := cfg.Meter
		if meter == nil {
			meter = otel.GetMeterProvider()
		}
		app.Use(newObserver(cfg.Name, meter).handle)
	}
	// Inside the tracing and the request metrics: a handler's panic is answered, traced and
	// counted as the 500 it is.
	app.Use(recover.New(recover.Config{EnableStackTrace: true}))
	// Inside the trace, so that its 414 carries a trace ID like every other error.
	app.Use(uriLimit(cfg.HeaderLimit / 2))
	return app
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// DecodeJSON reads the request body into v. A body that is not JSON answers 415; malformed
// JSON, JSON nested deeper than MaxDepth, data after the JSON value (jsonbody) and a body
// that is null answer 400 with the complaint: a null body would otherwise read as a
// request that asks for nothing, and be answered as done.
func DecodeJSON(c *fiber.Ctx, v any) error {
	body := c.Body()
	if len(strings.TrimSpace(string(body))) == 0 {
		return apperr.New(apperr.RequestInvalid, "A JSON request body is required.")
	}
	if ct := c.Get(fiber.HeaderContentType); !IsJSON(ct) {
		return apperr.New(apperr.UnsupportedMediaType, "Content-Type %q is not supported; send application/json.", ct)
	}
	if err := CheckDepth(body); err != nil {
		return err
	}
	if jsonbody.IsNull(body) {
		return apperr.New(apperr.RequestInvalid, "The request body is null; send the JSON the operation takes.")
	}
	if err := jsonbody.Decode(body, v); err != nil {
		return apperr.Wrap(apperr.RequestInvalid, err, "The request body is not valid JSON: %s", err.Error())
	}
	return nil
}

// Created answers 201 with v and a Location header.
func Created(c *fiber.Ctx, location string, v any) error {
	c.Location(location)
	return c.Status(fiber.StatusCreated).JSON(v)
}
