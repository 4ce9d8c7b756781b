package activation_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/activation"
	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/registry"
)

// fakeIdentity answers the activation state with whatever body it is set to.
type fakeIdentity struct {
	url    string
	calls  atomic.Int64
	status atomic.Int64
	body   atomic.Value
	caller atomic.Value
}

func newFakeIdentity(t *testing.T, signer *auth.Signer) *fakeIdentity {
	t.Helper()
	f := &fakeIdentity{}
	f.status.Store(http.StatusOK)
	f.body.Store(`{"activated": false}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.calls.Add(1)
		if r.URL.Path != identityapi.ActivationPath || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		p, err := signer.Decode(r.Header.Get(auth.HeaderPrincipal), r.Header.Get(auth.HeaderSignature))
		if err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		f.caller.Store(p)
		w.WriteHeader(int(f.status.Load()))
		_, _ = w.Write([]byte(f.body.Load().(string)))
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func setup(t *testing.T) (*activation.Checker, *fakeIdentity, *clock) {
	t.Helper()
	signer, err := auth.NewSigner([]byte("activation-test-key-0123456789"))
	require.NoError(t, err)
	id := newFakeIdentity(t, signer)
	clk := &clock{now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	c, err := activation.New(activation.Config{
		Resolver: registry.NewStatic(map[string][]string{"identity": {id.url}}),
		Signer:   signer,
		Now:      clk.Now,
	})
	require.NoError(t, err)
	return c, id, clk
}

func TestLockedIsRememberedBriefly(t *testing.T) {
	t.Parallel()
	c, id, clk := setup(t)
	ctx := context.Background()

	err := c.Check(ctx)
	require.Error(t, err)
	assert.True(t, apperr.HasReason(err, apperr.InstanceLocked))
	assert.Equal(t, 423, apperr.KindOf(err).HTTPStatus())
	assert.Equal(t, auth.TypeService, id.caller.Load().(auth.Principal).Type, "the gateway asks as a service")

	clk.Advance(500 * time.Millisecond)
	assert.ErrorIs(t, c.Check(ctx), activation.ErrLocked)
	assert.EqualValues(t, 1, id.calls.Load(), "within a second the answer is reused")

	id.body.Store(`{"activated": true}`)
	clk.Advance(600 * time.Millisecond)
	require.NoError(t, c.Check(ctx))
	assert.EqualValues(t, 2, id.calls.Load())

	// Activated is for good.
	id.body.Store(`{"activated": false}`)
	clk.Advance(time.Hour)
	require.NoError(t, c.Check(ctx))
	assert.EqualValues(t, 2, id.calls.Load())
}

func TestConcurrentChecksShareOneQuestion(t *testing.T) {
	t.Parallel()
	c, id, _ := setup(t)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.ErrorIs(t, c.Check(context.Background()), activation.ErrLocked)
		}()
	}
	wg.Wait()
	assert.EqualValues(t, 1, id.calls.Load())
}

func TestIdentityThatCannotSay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		body   string
	}{
		{"server error", http.StatusInternalServerError, `{}`},
		{"refused", http.StatusForbidden, `{}`},
		{"not the state", http.StatusOK, `{"locked": true}`},
		{"not JSON", http.StatusOK, `yes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, id, _ := setup(t)
			id.status.Store(int64(tt.status))
			id.body.Store(tt.body)
			err := c.Check(context.Background())
			require.Error(t, err)
			assert.Equal(t, apperr.KindUnavailable, apperr.KindOf(err))
			calls := id.calls.Load()
			_ = c.Check(context.Background())
			assert.Greater(t, id.calls.Load(), calls, "a failure is not remembered")
		})
	}

	signer, err := auth.NewSigner([]byte("activation-test-key-0123456789"))
	require.NoError(t, err)
	c, err := activation.New(activation.Config{Resolver: registry.NewStatic(nil), Signer: signer})
	require.NoError(t, err)
	assert.Equal(t, apperr.KindUnavailable, apperr.KindOf(c.Check(context.Background())), "no identity instance")
}
