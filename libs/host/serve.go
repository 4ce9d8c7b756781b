package host

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/registry"
)

// Service is what every Baton service (and the gateway) gives the host: its routes and
// its background work (consumers, relays, reconcilers), which must return when ctx ends.
type Service interface {
	Routes(r fiber.Router)
	Run(ctx context.Context) error
}

// Unit is one service served by a process: standalone mode serves several.
type Unit struct {
	Name    string
	Service Service
	// Addr is the listen address; port 0 picks a free port.
	Addr string
	// AdvertiseAddr is registered for discovery; empty derives it from the listener.
	AdvertiseAddr string
	// BodyLimit of the unit's app; httpx.DefaultBodyLimit when zero.
	BodyLimit int
	// HeaderLimit bounds the request line and headers; httpx.UpstreamHeaderLimit when
	// zero, room for everything the gateway (at httpx.HeaderLimit) forwards.
	HeaderLimit int
	// Checks must all pass for /ready to answer 200.
	Checks map[string]func(context.Context) error
	// Discoverable units are registered in Consul or the static table.
	Discoverable bool
	// OnServing, when set, is called once the unit is registered and ready, with the
	// address it listens on.
	OnServing func(addr net.Addr)
}

type running struct {
	unit      Unit
	app       *fiber.App
	listener  net.Listener
	regID     string
	ready     atomic.Bool
	stopped   chan struct{}
	baseURL   string
	advertise string
}

// Serve runs units on p until ctx ends or one of them fails, then shuts down in order:
// withdraw from discovery and report not ready, drain in-flight requests, stop background
// work (consumers commit what they handled), and return. The caller closes p afterwards.
func Serve(ctx context.Context, p *Platform, units ...Unit) error {
	ctx, cancelAll := context.WithCancelCause(ctx)
	defer cancelAll(nil)

	admin, err := startAdmin(p, cancelAll)
	if err != nil {
		return err
	}
	runs := make([]*running, 0, len(units))
	for _, u := range units {
		r, err := start(ctx, p, u, cancelAll)
		if err != nil {
			cancelAll(err)
			shutdown(p, runs)
			admin.stop(p)
			return err
		}
		runs = append(runs, r)
	}

	runCtx, stopRuns := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.unit.Service.Run(runCtx); err != nil && !errors.Is(err, context.Canceled) {
				cancelAll(fmt.Errorf("%s stopped: %w", r.unit.Name, err))
			}
		}()
	}
	for _, r := range runs {
		if r.unit.Discoverable {
			if err := register(ctx, p, r); err != nil {
				cancelAll(err)
				break
			}
		}
		r.ready.Store(true)
		p.Logger.Info("serving", "unit", r.unit.Name, "addr", r.listener.Addr().String())
	}
	for _, r := range runs {
		if r.unit.OnServing != nil && ctx.Err() == nil {
			r.unit.OnServing(r.listener.Addr())
		}
	}

	<-ctx.Done()
	cause := context.Cause(ctx)
	p.Logger.Info("shutting down", "reason", cause)
	shutdown(p, runs)
	admin.stop(p)
	stopRuns()
	wg.Wait()
	if errors.Is(cause, context.Canceled) {
		return nil
	}
	return cause
}

func start(ctx context.Context, p *Platform, u Unit, fail context.CancelCauseFunc) (*running, error) {
	ln, err := net.Listen("tcp", u.Addr)
	if err != nil {
		return nil, fmt.Errorf("%s: listen on %s: %w", u.Name, u.Addr, err)
	}
	r := &running{unit: u, listener: ln, stopped: make(chan struct{})}
	headerLimit := u.HeaderLimit
	if headerLimit == 0 {
		headerLimit = httpx.UpstreamHeaderLimit
	}
	r.app = httpx.NewApp(httpx.Config{
		Name: u.Name, BodyLimit: u.BodyLimit, HeaderLimit: headerLimit, Logger: p.Logger.With("unit", u.Name),
		Meter: p.Telemetry.MeterProvider(),
	})
	r.app.Get("/health", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"status": "UP"}) })
	r.app.Get("/ready", r.readyHandler)
	u.Service.Routes(r.app)
	// Anything no route claimed answers 404 in the contract's shape.
	r.app.Use(func(c *fiber.Ctx) error {
		return apperr.New(apperr.RouteNotFound, "No endpoint %s %s.", c.Method(), c.Path())
	})
	r.advertise = advertiseAddr(u.AdvertiseAddr, ln.Addr().(*net.TCPAddr))
	r.baseURL = "http://" + r.advertise
	go func() {
		defer close(r.stopped)
		if err := r.app.Listener(ln); err != nil {
			fail(fmt.Errorf("%s: serve: %w", u.Name, err))
		}
	}()
	return r, nil
}

func (r *running) readyHandler(c *fiber.Ctx) error {
	if !r.ready.Load() {
		return apperr.New(apperr.DependencyUnavailable, "%s is not ready.", r.unit.Name)
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
	defer cancel()
	status := fiber.Map{}
	var failed bool
	for name, check := range r.unit.Checks {
		if err := check(ctx); err != nil {
			status[name] = err.Error()
			failed = true
			continue
		}
		status[name] = "UP"
	}
	if failed {
		return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "DOWN", "checks": status})
	}
	return c.JSON(fiber.Map{"status": "UP", "checks": status})
}

func advertiseAddr(configured string, ln *net.TCPAddr) string {
	if configured != "" {
		return configured
	}
	host := ln.IP.String()
	if ln.IP.IsUnspecified() {
		host = outboundHost()
	}
	return net.JoinHostPort(host, strconv.Itoa(ln.Port))
}

// outboundHost is how peers can reach a process listening on every interface: its first
// non-loopback IPv4 address (unique per replica, unlike a service name), else its hostname.
func outboundHost() string {
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
				return ipn.IP.String()
			}
		}
	}
	if h, err := os.Hostname(); err == nil {
		return h
	}
	return "127.0.0.1"
}

func register(ctx context.Context, p *Platform, r *running) error {
	if p.Consul == nil {
		if p.Static != nil {
			p.Static.Set(r.unit.Name, r.baseURL)
		}
		return nil
	}
	host, portStr, _ := net.SplitHostPort(r.advertise)
	port, _ := strconv.Atoi(portStr)
	r.regID = fmt.Sprintf("%s-%s-%d", r.unit.Name, host, port)
	return registry.NewRegistrar(p.Consul).Register(ctx, registry.Registration{
		ID: r.regID, Name: r.unit.Name, Address: host, Port: port,
		CheckURL: r.baseURL + "/ready", Passing: r.checksPass(ctx),
	})
}

func (r *running) checksPass(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for _, check := range r.unit.Checks {
		if check(ctx) != nil {
			return false
		}
	}
	return true
}

// shutdown withdraws every unit from discovery before draining any, so no new request is
// routed to a process that is going away.
func shutdown(p *Platform, runs []*running) {
	timeout := p.Env.ShutdownTimeout
	if timeout == 0 {
		timeout = 20 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for _, r := range runs {
		r.ready.Store(false)
		if r.regID != "" {
			if err := registry.NewRegistrar(p.Consul).Deregister(ctx, r.regID); err != nil {
				p.Logger.Error("deregister", "unit", r.unit.Name, "error", err)
			}
		} else if p.Static != nil && r.unit.Discoverable {
			p.Static.Set(r.unit.Name)
		}
	}
	for _, r := range runs {
		if err := r.app.ShutdownWithContext(ctx); err != nil {
			p.Logger.Error("drain requests", "unit", r.unit.Name, "error", err)
		}
		<-r.stopped
	}
}

// adminServer is a process's operators-only listener: /metrics (and /health) on
// BATON_ADMIN_ADDR, apart from every unit's port, so that neither the public gateway port
// nor a service's port shows metrics, which name internal addresses.
type adminServer struct {
	app     *fiber.App
	stopped chan struct{}
}

// startAdmin serves p's metrics on p.Env.AdminAddr, unless it is empty or "off".
func startAdmin(p *Platform, fail context.CancelCauseFunc) (*adminServer, error) {
	addr := p.Env.AdminAddr
	if addr == "" || addr == AdminOff {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin: listen on %s (BATON_ADMIN_ADDR): %w", addr, err)
	}
	a := &adminServer{stopped: make(chan struct{}),
		app: httpx.NewApp(httpx.Config{Name: "admin", Logger: p.Logger.With("unit", "admin"), NoTracing: true})}
	a.app.Get("/health", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"status": "UP"}) })
	if p.Telemetry != nil {
		a.app.Get("/metrics", adaptor.HTTPHandler(p.Telemetry.MetricsHandler()))
	}
	a.app.Use(func(c *fiber.Ctx) error {
		return apperr.New(apperr.RouteNotFound, "No endpoint %s %s.", c.Method(), c.Path())
	})
	p.adminAddr.Store(ln.Addr().String())
	p.Logger.Info("serving operators' endpoints", "addr", ln.Addr().String())
	go func() {
		defer close(a.stopped)
		if err := a.app.Listener(ln); err != nil {
			fail(fmt.Errorf("admin: serve: %w", err))
		}
	}()
	return a, nil
}

func (a *adminServer) stop(p *Platform) {
	if a == nil {
		return
	}
	if err := a.app.Shutdown(); err != nil {
		p.Logger.Error("stop the operators' listener", "error", err)
	}
	<-a.stopped
}
