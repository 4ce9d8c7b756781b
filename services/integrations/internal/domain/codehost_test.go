package domain

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
)

func TestVerifySignature(t *testing.T) {
	t.Parallel()
	body := []byte(`{"zen":"Keep it logically awesome."}`)
	good := SignaturePrefix + hex.EncodeToString(Sign("s3cret", body))
	tests := []struct {
		name   string
		secret string
		body   []byte
		header string
		ok     bool
	}{
		{"signed with the secret", "s3cret", body, good, true},
		{"missing", "s3cret", body, "", false},
		{"another secret", "other", body, good, false},
		{"body changed by one byte", "s3cret", append([]byte(`{"zen":"Keep it logically awesome!"`), '}'), good, false},
		{"no prefix", "s3cret", body, strings.TrimPrefix(good, SignaturePrefix), false},
		{"sha1", "s3cret", body, "sha1=" + strings.TrimPrefix(good, SignaturePrefix)[:40], false},
		{"not hex", "s3cret", body, SignaturePrefix + strings.Repeat("zz", 32), false},
		{"short", "s3cret", body, good[:len(good)-2], false},
		{"upper-case hex", "s3cret", body, SignaturePrefix + strings.ToUpper(strings.TrimPrefix(good, SignaturePrefix)), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := VerifySignature(tt.secret, tt.body, tt.header)
			if tt.ok {
				assert.NoError(t, err)
				return
			}
			assert.True(t, apperr.HasReason(err, apperr.IntegrationInvalidSignature), "%v", err)
		})
	}
}

func TestInstallState(t *testing.T) {
	t.Parallel()
	key := CodeHostStateKey([]byte("0123456789abcdef0123456789abcdef"))
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	st := InstallState{Team: "ops", User: "u1", Issued: now, Expires: now.Add(StateTTL)}
	signed := SignInstallState(key, st)
	body, _, _ := strings.Cut(signed, ".")
	forged := func(s InstallState) string {
		raw, err := json.Marshal(s)
		require.NoError(t, err)
		_, mac, _ := strings.Cut(signed, ".")
		return base64.RawURLEncoding.EncodeToString(raw) + "." + mac
	}
	tests := []struct {
		name string
		raw  string
		at   time.Time
		ok   bool
	}{
		{"as signed", signed, now.Add(time.Minute), true},
		{"just before expiry", signed, now.Add(StateTTL - time.Second), true},
		{"expired", signed, now.Add(StateTTL), false},
		{"empty", "", now, false},
		{"no signature", body, now, false},
		{"another team under the same signature", forged(InstallState{Team: "prod", User: "u1", Issued: now, Expires: now.Add(StateTTL)}), now, false},
		{"signed with another key", SignInstallState(CodeHostStateKey([]byte("another key of 32 bytes........")), st), now, false},
		{"too long", signed + strings.Repeat("a", MaxStateLen), now, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := OpenState(key, tt.raw, tt.at)
			if !tt.ok {
				assert.True(t, apperr.HasReason(err, apperr.IntegrationInvalidSignature), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "ops", got.Team)
			assert.Equal(t, "u1", got.User)
			assert.True(t, got.Issued.Equal(now))
		})
	}
}

func TestParseInstallationID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give any
		want int64
		ok   bool
	}{
		{json.Number("957387"), 957387, true},
		{"957387", 957387, true},
		{" 42 ", 42, true},
		{float64(42), 42, true},
		{json.Number("9007199254740993"), 9007199254740993, true},
		{json.Number("0"), 0, false},
		{"-1", 0, false},
		{json.Number("1.5"), 0, false},
		{float64(1.5), 0, false},
		{"abc", 0, false},
		{"", 0, false},
		{json.Number(""), 0, false},
		{nil, 0, false},
		{true, 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseInstallationID(tt.give)
		assert.Equal(t, tt.ok, ok, "%v", tt.give)
		assert.Equal(t, tt.want, got, "%v", tt.give)
	}
}

func installationEvent(t *testing.T, raw string) InstallationEvent {
	t.Helper()
	var e InstallationEvent
	require.NoError(t, json.Unmarshal([]byte(raw), &e))
	return e
}

func TestInstallationApply(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	made := now.Add(-time.Minute)
	created := installationEvent(t, `{"action":"created","installation":{"id":7,"account":{"login":"acme","type":"Organization"},"created_at":"`+
		made.Format(time.RFC3339)+`"},"repositories":[{"full_name":"acme/api"},{"full_name":"acme/web"}]}`)
	tests := []struct {
		name  string
		give  Installation
		event string
		e     InstallationEvent
		want  func(t *testing.T, in Installation)
	}{
		{"created: known, active, repositories", Installation{ID: 7}, "installation", created, func(t *testing.T, in Installation) {
			assert.True(t, in.Known)
			assert.Equal(t, InstallationActive, in.Status)
			assert.Equal(t, "acme", in.AccountLogin)
			assert.Equal(t, "Organization", in.AccountType)
			assert.Equal(t, []string{"acme/api", "acme/web"}, in.Repositories)
			assert.True(t, in.CreatedAt.Equal(made))
			assert.False(t, in.Runnable(), "not linked")
			assert.True(t, in.Provable())
		}},
		{"created with epoch seconds", Installation{ID: 7}, "installation",
			installationEvent(t, `{"action":"created","installation":{"id":7,"created_at":1557933591}}`), func(t *testing.T, in Installation) {
				assert.Equal(t, time.Unix(1557933591, 0).UTC(), in.CreatedAt)
			}},
		{"created after a landing in the flow keeps the link", Installation{ID: 7, Team: "ops", LinkIssued: now.Add(-2 * time.Minute)}, "installation", created,
			func(t *testing.T, in Installation) {
				assert.Equal(t, "ops", in.Team)
				assert.True(t, in.Runnable())
			}},
		{"created long before a landing's flow drops the link", Installation{ID: 7, Team: "ops", LinkIssued: now.Add(time.Hour)}, "installation", created,
			func(t *testing.T, in Installation) { assert.Empty(t, in.Team) }},
		{"deleted unlinks", Installation{ID: 7, Known: true, Status: InstallationActive, Team: "ops", LinkedBy: "u1", LinkedAt: now}, "installation",
			installationEvent(t, `{"action":"deleted","installation":{"id":7}}`), func(t *testing.T, in Installation) {
				assert.Equal(t, InstallationDeleted, in.Status)
				assert.Empty(t, in.Team)
				assert.Empty(t, in.LinkedBy)
				assert.False(t, in.Provable())
			}},
		{"suspend keeps the link, runs nothing", Installation{ID: 7, Known: true, Status: InstallationActive, Team: "ops"}, "installation",
			installationEvent(t, `{"action":"suspend","installation":{"id":7}}`), func(t *testing.T, in Installation) {
				assert.Equal(t, InstallationSuspended, in.Status)
				assert.Equal(t, "ops", in.Team)
				assert.False(t, in.Runnable())
			}},
		{"unsuspend", Installation{ID: 7, Known: true, Status: InstallationSuspended, Team: "ops"}, "installation",
			installationEvent(t, `{"action":"unsuspend","installation":{"id":7}}`), func(t *testing.T, in Installation) {
				assert.True(t, in.Runnable())
			}},
		{"new permissions accepted", Installation{ID: 7, Known: true, Status: InstallationActive, Team: "ops"}, "installation",
			installationEvent(t, `{"action":"new_permissions_accepted","installation":{"id":7,"account":{"login":"acme2","type":"Organization"}}}`),
			func(t *testing.T, in Installation) {
				assert.Equal(t, "acme2", in.AccountLogin)
				assert.True(t, in.Runnable())
			}},
		{"repositories added and removed", Installation{ID: 7, Known: true, Status: InstallationActive, Repositories: []string{"acme/api", "acme/web"}},
			"installation_repositories",
			installationEvent(t, `{"action":"added","installation":{"id":7},"repositories_added":[{"full_name":"acme/cli"},{"full_name":"acme/api"}],"repositories_removed":[{"full_name":"acme/web"}]}`),
			func(t *testing.T, in Installation) {
				assert.Equal(t, []string{"acme/api", "acme/cli"}, in.Repositories)
			}},
		{"an event of an installation made before Baton knew it", Installation{ID: 7}, "installation",
			installationEvent(t, `{"action":"suspend","installation":{"id":7}}`), func(t *testing.T, in Installation) {
				assert.True(t, in.Known)
				assert.Equal(t, InstallationSuspended, in.Status)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := tt.give
			in.Apply(tt.event, tt.e, now)
			tt.want(t, in)
		})
	}
}

func TestInstallationRepositoriesBounded(t *testing.T) {
	t.Parallel()
	var e InstallationEvent
	e.Action = ActionCreated
	for i := range MaxRepositories + 5 {
		e.Repositories = append(e.Repositories, repository{FullName: fmt.Sprintf("acme/r%d", i)})
	}
	var in Installation
	in.Apply("installation", e, time.Now())
	assert.Len(t, in.Repositories, MaxRepositories)
}
