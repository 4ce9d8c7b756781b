package app_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/identity/internal/app"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// memParams is an in-memory ParamStore.
type memParams struct {
	mu     sync.Mutex
	params map[string]domain.Param
}

func (m *memParams) CreateParam(_ context.Context, p domain.Param) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.params[p.Name]; ok {
		return domain.ParamExists(p.Name)
	}
	m.params[p.Name] = p
	return nil
}

func (m *memParams) FindParams(context.Context) ([]domain.Param, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []domain.Param
	for _, p := range m.params {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b domain.Param) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (m *memParams) UpdateParam(_ context.Context, name string, fn func(*domain.Param) error) (domain.Param, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.params[name]
	if !ok {
		return domain.Param{}, domain.ParamNotFound(name)
	}
	if err := fn(&p); err != nil {
		return domain.Param{}, err
	}
	m.params[name] = p
	return p, nil
}

func (m *memParams) DeleteParam(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.params[name]; !ok {
		return domain.ParamNotFound(name)
	}
	delete(m.params, name)
	return nil
}

func newBox(t *testing.T) *secrets.Box {
	t.Helper()
	key, err := secrets.GenerateKey()
	require.NoError(t, err)
	box, err := secrets.FromString(key)
	require.NoError(t, err)
	return box
}

var adminCtx = auth.WithPrincipal(context.Background(),
	auth.Principal{Type: auth.TypeGlobal, ID: "bootstrap", Roles: []string{auth.RoleAdmin}})

func TestResolvedParamsOpenSecrets(t *testing.T) {
	t.Parallel()
	store := &memParams{params: map[string]domain.Param{}}
	params := app.NewParams(store, newBox(t))
	for _, p := range []domain.Param{
		{Name: "token", Type: domain.ParamPassword, Value: "s3cret"},
		{Name: "fallback", Type: domain.ParamPassword, Default: "def-s3cret"},
		{Name: "region", Value: "eu"},
		{Name: "retries", Type: domain.ParamNumber, Default: "3"},
		{Name: "flags", Type: domain.ParamJSON, Value: map[string]any{"on": true}},
	} {
		_, err := params.CreateParam(adminCtx, p)
		require.NoError(t, err)
	}
	assert.True(t, secrets.IsSealed(store.params["token"].Value.(string)), "stored sealed")

	// A replacement sending the mask back keeps the secret.
	_, created, err := params.ReplaceParam(adminCtx, domain.Param{Name: "token", Type: domain.ParamPassword, Value: secrets.Mask, Label: "Token"})
	require.NoError(t, err)
	assert.False(t, created)

	got, err := params.ResolvedParams(context.Background())
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"token": "s3cret", "fallback": "def-s3cret", "region": "eu", "retries": "3", "flags": `{"on":true}`,
	}, got)

	shown, err := params.Params(adminCtx)
	require.NoError(t, err)
	for _, p := range shown {
		if p.Secret() {
			assert.Contains(t, []any{nil, secrets.Mask}, p.Value, p.Name)
			assert.Contains(t, []any{nil, secrets.Mask}, p.Default, p.Name)
		}
	}
}

func TestParamsWithoutASecretKey(t *testing.T) {
	t.Parallel()
	params := app.NewParams(&memParams{params: map[string]domain.Param{}}, app.NoSealer{})
	_, err := params.CreateParam(adminCtx, domain.Param{Name: "plain", Value: "ok"})
	require.NoError(t, err, "parameters without secrets need no key")
	_, err = params.CreateParam(adminCtx, domain.Param{Name: "pw", Type: domain.ParamPassword, Value: "x"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), secrets.EnvKey)
	assert.Equal(t, apperr.KindInternal, apperr.KindOf(err))
}

func TestParamsNeedAPrincipal(t *testing.T) {
	t.Parallel()
	params := app.NewParams(&memParams{params: map[string]domain.Param{}}, app.NoSealer{})
	_, err := params.Params(context.Background())
	assert.Equal(t, apperr.KindUnauthenticated, apperr.KindOf(err))
	_, err = params.CreateParam(auth.WithPrincipal(context.Background(), auth.Anonymous), domain.Param{Name: "x"})
	assert.Equal(t, apperr.KindUnauthenticated, apperr.KindOf(err))
}
