// Package registry finds service instances and announces this process's own: Consul
// registration with a health check and deregistration on shutdown, a caching Consul
// resolver, and a static resolver for standalone mode.
package registry

import (
	"context"
	"errors"
	"sync"
)

// ErrNoInstance means the service is known but has no healthy instance right now.
var ErrNoInstance = errors.New("no healthy instance")

// Resolver returns the base URLs ("http://host:port") of a service's healthy instances.
type Resolver interface {
	Resolve(ctx context.Context, service string) ([]string, error)
}

// Static is a Resolver over a fixed, updatable table, used in standalone mode and tests.
type Static struct {
	mu    sync.RWMutex
	table map[string][]string
}

// NewStatic returns a Static resolver with an initial table (which may be nil).
func NewStatic(table map[string][]string) *Static {
	s := &Static{table: map[string][]string{}}
	for name, urls := range table {
		s.Set(name, urls...)
	}
	return s
}

// Set replaces the instances of a service.
func (s *Static) Set(service string, urls ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.table[service] = append([]string(nil), urls...)
}

// Resolve returns the instances of service, or ErrNoInstance when it has none.
func (s *Static) Resolve(_ context.Context, service string) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	urls := s.table[service]
	if len(urls) == 0 {
		return nil, ErrNoInstance
	}
	return urls, nil
}
