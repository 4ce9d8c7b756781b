// Package activation keeps a locked installation closed: until identity says the
// installation was activated (GET /internal/v1/activation, libs/identityapi), the gateway
// answers 423 INSTANCE_LOCKED to everything but its open routes (API.md §2).
//
// An installation never goes back to locked, so "activated" is remembered for good and
// identity is asked no more; "locked" is remembered for LockedTTL, so an activation shows
// within about a second while identity gets at most one question a second from each
// gateway.
package activation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/registry"
)

// Defaults of Config.
const (
	DefaultLockedTTL = time.Second
	DefaultTimeout   = 5 * time.Second
)

// Config shapes a Checker.
type Config struct {
	// Resolver finds identity's instances; required.
	Resolver registry.Resolver
	// Signer signs the gateway's service principal into each question; required.
	Signer *auth.Signer
	// LockedTTL is how long "locked" is believed; DefaultLockedTTL when zero.
	LockedTTL time.Duration
	// Timeout bounds one question; DefaultTimeout when zero.
	Timeout time.Duration
	// Client sends the questions; a plain http.Client when nil.
	Client *http.Client
	// Logger receives identity's failures; slog.Default when nil.
	Logger *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// gatewayPrincipal is who the gateway is when it asks identity.
var gatewayPrincipal = auth.Principal{Type: auth.TypeService, ID: "gateway", Name: "gateway"}

// Checker answers whether requests may pass.
type Checker struct {
	cfg       Config
	header    http.Header
	activated atomic.Bool
	// mu makes concurrent requests of a locked installation share one question.
	mu          sync.Mutex
	lockedUntil time.Time
	next        atomic.Uint64
}

// New returns a Checker.
func New(cfg Config) (*Checker, error) {
	if cfg.Resolver == nil || cfg.Signer == nil {
		return nil, errors.New("activation: a resolver and a signer are required")
	}
	if cfg.LockedTTL <= 0 {
		cfg.LockedTTL = DefaultLockedTTL
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	c := &Checker{cfg: cfg, header: http.Header{}}
	// The gateway's principal never changes, so it is signed once.
	if err := cfg.Signer.SetHeaders(gatewayPrincipal, c.header.Set); err != nil {
		return nil, fmt.Errorf("activation: %w", err)
	}
	return c, nil
}

// ErrLocked is the answer while the installation is not activated.
var ErrLocked = apperr.New(apperr.InstanceLocked,
	"This installation is not activated yet: PUT /api/v2/activate with its one-time code.")

// Check returns nil once the installation is activated, ErrLocked (423) while it is not,
// and a 503 error when identity cannot say.
func (c *Checker) Check(ctx context.Context) error {
	if c.activated.Load() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// Another request may have found out while this one waited.
	if c.activated.Load() {
		return nil
	}
	if c.cfg.Now().Before(c.lockedUntil) {
		return ErrLocked
	}
	activated, err := c.ask(ctx)
	if err != nil {
		return apperr.Wrap(apperr.DependencyUnavailable, err,
			"Whether this installation is activated could not be checked; try again shortly.").WithRetryAfter(time.Second)
	}
	if activated {
		c.activated.Store(true)
		return nil
	}
	c.lockedUntil = c.cfg.Now().Add(c.cfg.LockedTTL)
	return ErrLocked
}

// ask puts the question to one identity instance, then to another should it fail.
func (c *Checker) ask(ctx context.Context) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	instances, err := c.cfg.Resolver.Resolve(ctx, identityapi.Service)
	if err != nil {
		return false, err
	}
	if len(instances) == 0 {
		return false, registry.ErrNoInstance
	}
	start := int(c.next.Add(1) % uint64(len(instances)))
	var lastErr error
	for i := range min(len(instances), 2) {
		base := instances[(start+i)%len(instances)]
		activated, err := c.call(ctx, base)
		if err == nil {
			return activated, nil
		}
		lastErr = err
		c.cfg.Logger.WarnContext(ctx, "identity could not say whether the installation is activated",
			slog.String("instance", base), slog.String("error", err.Error()))
		if ctx.Err() != nil {
			break
		}
	}
	return false, lastErr
}

func (c *Checker) call(ctx context.Context, base string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+identityapi.ActivationPath, nil)
	if err != nil {
		return false, err
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := c.cfg.Client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return false, err
	}
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("identity answered %d", resp.StatusCode)
	}
	// The contract's type refuses an answer without `activated`: the gateway never guesses.
	var state identityapi.ActivationState
	if err := json.Unmarshal(raw, &state); err != nil {
		return false, fmt.Errorf("identity answered %q, not the activation state", raw)
	}
	return state.Activated, nil
}
