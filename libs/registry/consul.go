package registry

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	consul "github.com/hashicorp/consul/api"
)

// NewConsulClient returns a Consul API client for the agent at addr ("host:port").
func NewConsulClient(addr string) (*consul.Client, error) {
	cfg := consul.DefaultConfig()
	cfg.Address = addr
	c, err := consul.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("consul client for %s: %w", addr, err)
	}
	return c, nil
}

// Registration describes one instance announced to Consul.
type Registration struct {
	// ID is unique per instance: `<name>-<host>-<port>`.
	ID   string
	Name string
	// Address and Port are how other processes reach the instance.
	Address string
	Port    int
	// CheckURL is polled by Consul; the instance is routable only while it answers 2xx.
	CheckURL string
	// CheckInterval defaults to 5 seconds.
	CheckInterval time.Duration
	// Passing starts the check as passing, for an instance that has just checked itself:
	// Consul would otherwise hold it critical until its first check, up to an interval.
	Passing bool
}

// Registrar announces instances to a Consul agent and withdraws them.
type Registrar struct {
	client *consul.Client
}

// NewRegistrar returns a Registrar over client.
func NewRegistrar(client *consul.Client) *Registrar { return &Registrar{client: client} }

// Register announces r with an HTTP health check. Consul removes instances whose check has
// been critical for a minute, so a crashed process does not linger in the catalogue.
func (g *Registrar) Register(ctx context.Context, r Registration) error {
	interval := r.CheckInterval
	if interval == 0 {
		interval = 5 * time.Second
	}
	reg := &consul.AgentServiceRegistration{
		ID:      r.ID,
		Name:    r.Name,
		Address: r.Address,
		Port:    r.Port,
		Tags:    []string{"baton"},
		Check: &consul.AgentServiceCheck{
			HTTP:                           r.CheckURL,
			Interval:                       interval.String(),
			Timeout:                        "2s",
			DeregisterCriticalServiceAfter: "1m",
		},
	}
	if r.Passing {
		reg.Check.Status = consul.HealthPassing
	}
	opts := consul.ServiceRegisterOpts{}.WithContext(ctx)
	if err := g.client.Agent().ServiceRegisterOpts(reg, opts); err != nil {
		return fmt.Errorf("register %s in consul: %w", r.ID, err)
	}
	return nil
}

// Deregister withdraws the instance id.
func (g *Registrar) Deregister(ctx context.Context, id string) error {
	opts := (&consul.QueryOptions{}).WithContext(ctx)
	if err := g.client.Agent().ServiceDeregisterOpts(id, opts); err != nil {
		return fmt.Errorf("deregister %s from consul: %w", id, err)
	}
	return nil
}

// ConsulResolver resolves services to their passing instances in Consul, caching each
// answer for a short TTL so the gateway does not ask Consul on every request. When Consul
// cannot be reached it keeps serving the last answer it had.
type ConsulResolver struct {
	client *consul.Client
	ttl    time.Duration

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	urls []string
	at   time.Time
}

// NewConsulResolver returns a resolver caching answers for ttl (2s when zero).
func NewConsulResolver(client *consul.Client, ttl time.Duration) *ConsulResolver {
	if ttl == 0 {
		ttl = 2 * time.Second
	}
	return &ConsulResolver{client: client, ttl: ttl, cache: map[string]cached{}}
}

// Resolve returns the base URLs of the passing instances of service.
func (r *ConsulResolver) Resolve(ctx context.Context, service string) ([]string, error) {
	r.mu.Lock()
	c, ok := r.cache[service]
	r.mu.Unlock()
	if ok && time.Since(c.at) < r.ttl {
		return nonEmpty(c.urls)
	}
	entries, _, err := r.client.Health().Service(service, "", true, (&consul.QueryOptions{}).WithContext(ctx))
	if err != nil {
		if ok {
			return nonEmpty(c.urls)
		}
		return nil, fmt.Errorf("resolve %s in consul: %w", service, err)
	}
	urls := make([]string, 0, len(entries))
	for _, e := range entries {
		addr := e.Service.Address
		if addr == "" {
			addr = e.Node.Address
		}
		urls = append(urls, "http://"+net.JoinHostPort(addr, strconv.Itoa(e.Service.Port)))
	}
	r.mu.Lock()
	r.cache[service] = cached{urls: urls, at: time.Now()}
	r.mu.Unlock()
	return nonEmpty(urls)
}

func nonEmpty(urls []string) ([]string, error) {
	if len(urls) == 0 {
		return nil, ErrNoInstance
	}
	return urls, nil
}
