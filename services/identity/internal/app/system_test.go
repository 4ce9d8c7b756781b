package app_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/identity/internal/app"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// memSystem is an in-memory SystemStore.
type memSystem struct {
	mu         sync.Mutex
	settings   domain.Settings
	activation domain.Activation
}

func (m *memSystem) FindSettings(context.Context) (domain.Settings, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.settings.Clone(), nil
}

func (m *memSystem) UpdateSettings(_ context.Context, fn func(*domain.Settings) (bool, error)) (domain.Settings, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.settings.Clone()
	write, err := fn(&st)
	if err != nil {
		return domain.Settings{}, err
	}
	if write {
		st.Version++
		m.settings = st
	}
	return m.settings.Clone(), nil
}

func (m *memSystem) FindActivation(context.Context) (domain.Activation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.activation, nil
}

func (m *memSystem) UpdateActivation(_ context.Context, fn func(*domain.Activation) (bool, error)) (domain.Activation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.activation
	write, err := fn(&a)
	if err != nil {
		return domain.Activation{}, err
	}
	if write {
		a.Version++
		m.activation = a
	}
	return m.activation, nil
}

func strPtr(s string) *string { return &s }

func TestResolvedSettingsOpenSecrets(t *testing.T) {
	t.Parallel()
	store := &memSystem{}
	system := app.NewSystem(store, newBox(t), "1.2.3")
	require.NoError(t, system.SeedSettings(context.Background()))

	shown, err := system.UpdateSettings(adminCtx, []domain.SettingChange{
		{Key: "chat", Config: []domain.ConfigChange{{Key: "signingSecret", Value: strPtr("sig")}}},
		{Key: "quotas", Config: []domain.ConfigChange{{Key: "maxConcurrentRuns", Value: strPtr("3")}}},
	})
	require.NoError(t, err)
	v, _ := shown.Value("chat.signingSecret")
	assert.Equal(t, secrets.Mask, v)
	stored, _ := store.settings.Value("chat.signingSecret")
	assert.True(t, secrets.IsSealed(stored))

	resolved, err := system.ResolvedSettings(context.Background())
	require.NoError(t, err)
	v, _ = resolved.Value("chat.signingSecret")
	assert.Equal(t, "sig", v)
	assert.Equal(t, int64(3), resolved.Int("quotas.maxConcurrentRuns", 0))
	assert.Equal(t, int64(90), resolved.Int("task.default.timeout", 0))
}

func TestActivationPublishFailureWithdrawsTheCode(t *testing.T) {
	t.Parallel()
	store := &memSystem{}
	failing := app.NewActivation(store, app.ActivationConfig{Publish: func(string) error { return assert.AnError }})
	_, err := failing.Prepare(context.Background())
	require.ErrorIs(t, err, assert.AnError)
	assert.Empty(t, store.activation.CodeHash)

	var published string
	working := app.NewActivation(store, app.ActivationConfig{Publish: func(code string) error { published = code; return nil }})
	generated, err := working.Prepare(context.Background())
	require.NoError(t, err)
	assert.True(t, generated)
	assert.Equal(t, domain.HashCode(published), store.activation.CodeHash)

	ok, err := working.Activate(context.Background(), published)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Empty(t, store.activation.CodeHash, "the code is spent")
	assert.False(t, store.activation.ActivatedAt.IsZero())
}
