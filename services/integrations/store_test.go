package integrations

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

func TestConfigFromEnvDatabaseURL(t *testing.T) {
	t.Parallel()
	key := strings.Repeat("ab", secrets.KeySize)
	tests := []struct {
		give string
		ok   bool
	}{
		{"", true},
		{"sqlite:/var/lib/baton/integrations.db", true},
		{"file:data/integrations.db", true},
		{"sqlite:", false},
		{"sqlite:/x.db?_pragma=synchronous(OFF)", false},
		{"mongodb://localhost:27017", false},
	}
	for _, tt := range tests {
		env := map[string]string{secrets.EnvKey: key, DatabaseURLEnv: tt.give}
		cfg, err := ConfigFromEnv(func(k string) string { return env[k] })
		if !tt.ok {
			require.Error(t, err, tt.give)
			assert.Contains(t, err.Error(), DatabaseURLEnv)
			continue
		}
		require.NoError(t, err, tt.give)
		assert.Equal(t, tt.give, cfg.DatabaseURL)
	}
}

// On a SQLite file of its own the service works as on MongoDB: a chat command runs a
// workflow once, its replay is refused, the run's channel is kept and the bot token is
// sealed in the file. Stopped, it closes the file; a process started anew on it still
// refuses the replay and finds the run's channel.
func TestServiceOnItsOwnFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "data", "integrations.db")
	f := newChatFixtureOn(t, nil, "sqlite:"+path)
	req := chatReq{path: "/api/v2/integration/chat/commands", contentType: formType, body: command("U-ANN", "C-OPS", "run rel/build env=prod", "trig-file"),
		ts: strconv.FormatInt(f.clock.Now().Unix(), 10)}
	code, out := f.send(t, req)
	require.Equal(t, http.StatusOK, code, out)
	assert.Equal(t, "in_channel", out["response_type"])
	code, out = f.send(t, req)
	assert.Equal(t, http.StatusUnauthorized, code, "a replay: %v", out)
	require.Len(t, f.runs.all(), 1)
	ch, err := f.svc.areas.Chat.Store.FindRunChannel(t.Context(), "run-1")
	require.NoError(t, err)
	assert.Equal(t, domain.ChatChannel{WorkspaceID: "T1", ChannelID: "C-OPS"}, ch)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_ = f.svc.Run(ctx) // its consumers have no broker here: only the file matters
	assert.ErrorIs(t, f.svc.areas.Chat.Store.MarkPosted(t.Context(), "k", f.clock.Now()), sqlitex.ErrClosed, "closed once stopped")

	var atRest []byte
	files, err := filepath.Glob(filepath.Join(filepath.Dir(path), "*"))
	require.NoError(t, err)
	for _, file := range files {
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		atRest = append(atRest, raw...)
	}
	assert.Contains(t, string(atRest), "C-OPS", "the run's channel is in the file")
	assert.NotContains(t, string(atRest), fakeBotToken)

	again := newChatFixtureOn(t, nil, "sqlite:"+path)
	code, out = again.send(t, req)
	assert.Equal(t, http.StatusUnauthorized, code, "still a replay after a restart: %v", out)
	assert.Empty(t, again.runs.all())
	ch, err = again.svc.areas.Chat.Store.FindRunChannel(t.Context(), "run-1")
	require.NoError(t, err)
	assert.Equal(t, domain.ChatChannel{WorkspaceID: "T1", ChannelID: "C-OPS"}, ch)
}
