package identity_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/identity"
)

var anonymous = auth.Anonymous

func TestActivationWithAGeneratedCode(t *testing.T) {
	t.Parallel()
	f := newSysFixture(t)
	file := filepath.Join(t.TempDir(), "lib", "activation-code")
	f.start(t, identity.Config{ActivationCodeFile: file})

	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	code := strings.TrimSpace(string(raw))
	assert.Len(t, code, 32)
	info, err := os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	assert.NotContains(t, f.logs.String(), code, "the code is never logged")
	assert.Contains(t, f.logs.String(), file, "the log says where the code is")

	status := func() string {
		t.Helper()
		c, body := f.do(t, &sysService, http.MethodGet, "/internal/v1/activation", "")
		require.Equal(t, http.StatusOK, c, body)
		return body
	}
	tests := []struct {
		name     string
		who      *auth.Principal
		body     string
		wantCode int
		wantBody string
	}{
		{"no body answers the state", &anonymous, "", 200, "false"},
		{"no code answers the state", &anonymous, `{}`, 200, "false"},
		{"a wrong code", &anonymous, `{"otc": "0123456789abcdef0123456789abcdef"}`, 400, ""},
		{"an empty code", &anonymous, `{"otc": ""}`, 400, ""},
		{"not JSON", &anonymous, `{"otc": `, 400, ""},
		{"without the gateway's signature", nil, `{"otc": "` + code + `"}`, 401, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, body := f.do(t, tt.who, http.MethodPut, "/api/v2/activate", tt.body)
			require.Equal(t, tt.wantCode, c, body)
			if tt.wantBody != "" {
				assert.Equal(t, tt.wantBody, body)
			}
		})
	}
	assert.JSONEq(t, `{"activated": false}`, status())

	c, body := f.do(t, &anonymous, http.MethodPut, "/api/v2/activate", `{"otc": " `+code+`\n"}`)
	require.Equal(t, http.StatusOK, c, body)
	assert.Equal(t, "true", body)
	assert.JSONEq(t, `{"activated": true}`, status())
	c, body = f.do(t, &anonymous, http.MethodPut, "/api/v2/activate", "")
	require.Equal(t, http.StatusOK, c)
	assert.Equal(t, "true", body)
	c, body = f.do(t, &anonymous, http.MethodPut, "/api/v2/activate", `{"otc": "anything"}`)
	require.Equal(t, http.StatusBadRequest, c, "a wrong code is wrong on an unlocked installation too: %s", body)
	assert.JSONEq(t, `{"activated": true}`, status(), "and it stays unlocked")
	c, body = f.do(t, &anonymous, http.MethodPut, "/api/v2/activate", `{"otc": "`+code+`"}`)
	require.Equal(t, http.StatusBadRequest, c, "the generated code is spent: %s", body)

	// A restart neither locks it again nor hands out another code.
	other := filepath.Join(t.TempDir(), "activation-code")
	f.start(t, identity.Config{ActivationCodeFile: other})
	assert.NoFileExists(t, other)
	assert.JSONEq(t, `{"activated": true}`, status())
}

func TestActivationStateIsOnlyForServices(t *testing.T) {
	t.Parallel()
	f := newSysFixture(t)
	f.start(t, identity.Config{})
	tests := []struct {
		name     string
		who      *auth.Principal
		wantCode int
	}{
		{"service", &sysService, http.StatusOK},
		{"admin", &sysAdmin, http.StatusForbidden},
		{"user", &sysUser, http.StatusForbidden},
		{"anonymous", &anonymous, http.StatusUnauthorized},
		{"unsigned", nil, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := f.do(t, tt.who, http.MethodGet, "/internal/v1/activation", "")
			assert.Equal(t, tt.wantCode, code, body)
		})
	}
}

func TestActivationWithAConfiguredCode(t *testing.T) {
	t.Parallel()
	f := newSysFixture(t)
	file := filepath.Join(t.TempDir(), "activation-code")
	f.start(t, identity.Config{ActivationCode: "let-me-in", ActivationCodeFile: file})
	assert.NoFileExists(t, file, "a configured code is not written anywhere")

	code, _ := f.do(t, &anonymous, http.MethodPut, "/api/v2/activate", `{"otc": "let-me-out"}`)
	assert.Equal(t, http.StatusBadRequest, code)
	code, body := f.do(t, &anonymous, http.MethodPut, "/api/v2/activate", `{"otc": "let-me-in"}`)
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, "true", body)

	// Unlocked: the configured code still answers true, a wrong one still 400.
	code, body = f.do(t, &anonymous, http.MethodPut, "/api/v2/activate", `{"otc": "let-me-in"}`)
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, "true", body)
	code, body = f.do(t, &anonymous, http.MethodPut, "/api/v2/activate", `{"otc": "let-me-out"}`)
	assert.Equal(t, http.StatusBadRequest, code, body)
}

func TestActivationWithoutACodeStaysLocked(t *testing.T) {
	t.Parallel()
	f := newSysFixture(t)
	f.start(t, identity.Config{})
	code, _ := f.do(t, &anonymous, http.MethodPut, "/api/v2/activate", `{"otc": ""}`)
	assert.Equal(t, http.StatusBadRequest, code)
	_, body := f.do(t, &anonymous, http.MethodPut, "/api/v2/activate", "")
	assert.Equal(t, "false", body)
}

func TestAutoActivation(t *testing.T) {
	t.Parallel()
	f := newSysFixture(t)
	file := filepath.Join(t.TempDir(), "activation-code")
	f.start(t, identity.Config{AutoActivate: true, ActivationCodeFile: file})
	assert.NoFileExists(t, file)
	_, body := f.do(t, &anonymous, http.MethodPut, "/api/v2/activate", "")
	assert.Equal(t, "true", body)
}

func TestReplicasStartingTogetherHandOutOneCode(t *testing.T) {
	t.Parallel()
	f := newSysFixture(t)
	dir := t.TempDir()
	files := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")}
	var wg sync.WaitGroup
	errs := make([]error, len(files))
	for i, file := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replica := &sysFixture{client: f.client, db: f.db, signer: f.signer, key: f.key, logs: &syncBuffer{}}
			errs[i] = replica.tryStart(identity.Config{ActivationCodeFile: file})
		}()
	}
	wg.Wait()
	var written []string
	for i, file := range files {
		require.NoError(t, errs[i])
		if raw, err := os.ReadFile(file); err == nil {
			written = append(written, strings.TrimSpace(string(raw)))
		}
	}
	require.Len(t, written, 1, "one replica generates the code")

	f.start(t, identity.Config{})
	code, body := f.do(t, &anonymous, http.MethodPut, "/api/v2/activate", `{"otc": "`+written[0]+`"}`)
	require.Equal(t, http.StatusOK, code, body)
}

func TestAnUnwritableCodeFileFailsTheStart(t *testing.T) {
	t.Parallel()
	f := newSysFixture(t)
	blocker := filepath.Join(t.TempDir(), "not-a-dir")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	err := f.tryStart(identity.Config{ActivationCodeFile: filepath.Join(blocker, "activation-code")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "BATON_ACTIVATION_CODE")

	// The code was withdrawn, so a start that can write it generates one.
	file := filepath.Join(t.TempDir(), "activation-code")
	f.start(t, identity.Config{ActivationCodeFile: file})
	assert.FileExists(t, file)
}

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	key, err := secrets.GenerateKey()
	require.NoError(t, err)
	tests := []struct {
		name    string
		env     map[string]string
		want    identity.Config
		wantErr string
	}{
		{"defaults", map[string]string{"BATON_SECRET_KEY": key},
			identity.Config{SecretKey: key, ActivationCodeFile: identity.DefaultActivationCodeFile}, ""},
		{"everything set", map[string]string{"BATON_SECRET_KEY": key, "BATON_ACTIVATION_CODE": "otc",
			"BATON_ACTIVATION_CODE_FILE": "/tmp/code", "BATON_AUTO_ACTIVATE": "true"},
			identity.Config{SecretKey: key, ActivationCode: "otc", ActivationCodeFile: "/tmp/code", AutoActivate: true}, ""},
		{"no secret key", map[string]string{}, identity.Config{}, "BATON_SECRET_KEY is required"},
		{"a passphrase is no key", map[string]string{"BATON_SECRET_KEY": "hunter2"}, identity.Config{}, "BATON_SECRET_KEY"},
		{"bad switch", map[string]string{"BATON_SECRET_KEY": key, "BATON_AUTO_ACTIVATE": "sure"}, identity.Config{}, "BATON_AUTO_ACTIVATE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := identity.ConfigFromEnv(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.NotContains(t, err.Error(), "hunter2", "a bad key is not repeated back")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want.SecretKey, got.SecretKey)
			assert.Equal(t, tt.want.ActivationCode, got.ActivationCode)
			assert.Equal(t, tt.want.ActivationCodeFile, got.ActivationCodeFile)
			assert.Equal(t, tt.want.AutoActivate, got.AutoActivate)
			logged := got.LogValue().String()
			assert.NotContains(t, logged, key)
			if tt.want.ActivationCode != "" {
				assert.NotContains(t, logged, "="+tt.want.ActivationCode)
			}
		})
	}
}
