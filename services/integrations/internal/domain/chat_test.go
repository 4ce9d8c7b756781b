package domain_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

func TestVerifyChatRequest(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	body := []byte("token=x&team_id=T1&text=run+a%2Fb")
	ts := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	// Slack's published example: the signing secret, timestamp, body and signature of its
	// request-signing documentation.
	slackBody := []byte("token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c")
	slackNow := time.Unix(1531420618, 0)
	tests := []struct {
		name   string
		secret string
		ts     string
		sig    string
		body   []byte
		now    time.Time
		ok     bool
	}{
		{"good", "s3cret", ts(0), domain.SignChatRequest("s3cret", ts(0), body), body, now, true},
		{"the platform's published example", "8f742231b10e8888abcd99yyyzzz85a5", "1531420618",
			"v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503", slackBody, slackNow, true},
		{"four minutes old", "s3cret", ts(-4 * time.Minute), domain.SignChatRequest("s3cret", ts(-4*time.Minute), body), body, now, true},
		{"bad signature", "s3cret", ts(0), domain.SignChatRequest("other", ts(0), body), body, now, false},
		{"body changed", "s3cret", ts(0), domain.SignChatRequest("s3cret", ts(0), body), append([]byte(nil), append(body, ' ')...), now, false},
		{"missing signature", "s3cret", ts(0), "", body, now, false},
		{"missing timestamp", "s3cret", "", domain.SignChatRequest("s3cret", "", body), body, now, false},
		{"timestamp not a number", "s3cret", "yesterday", domain.SignChatRequest("s3cret", "yesterday", body), body, now, false},
		{"stale", "s3cret", ts(-6 * time.Minute), domain.SignChatRequest("s3cret", ts(-6*time.Minute), body), body, now, false},
		{"future", "s3cret", ts(6 * time.Minute), domain.SignChatRequest("s3cret", ts(6*time.Minute), body), body, now, false},
		{"no signing secret", "", ts(0), domain.SignChatRequest("", ts(0), body), body, now, false},
		{"signature without v0=", "s3cret", ts(0), strings.TrimPrefix(domain.SignChatRequest("s3cret", ts(0), body), "v0="), body, now, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := domain.VerifyChatRequest(tt.secret, tt.ts, tt.sig, tt.body, tt.now)
			if tt.ok {
				assert.NoError(t, err)
				return
			}
			assert.True(t, apperr.HasReason(err, apperr.IntegrationInvalidSignature), "%v", err)
		})
	}
}

func TestParseChatCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give    string
		want    domain.ChatCommand
		invalid bool
	}{
		{give: "", want: domain.ChatCommand{Verb: domain.VerbHelp}},
		{give: "help", want: domain.ChatCommand{Verb: domain.VerbHelp}},
		{give: "dance now", want: domain.ChatCommand{Verb: domain.VerbHelp}},
		{give: "run infra/build", want: domain.ChatCommand{Verb: domain.VerbRun, Team: "infra", Workflow: "build", Params: map[string]string{}}},
		{give: "  RUN   infra/build  env=prod n=3 ", want: domain.ChatCommand{Verb: domain.VerbRun, Team: "infra", Workflow: "build", Params: map[string]string{"env": "prod", "n": "3"}}},
		{give: `run infra/build msg="hello world" q='it''s' e=`, want: domain.ChatCommand{Verb: domain.VerbRun, Team: "infra", Workflow: "build", Params: map[string]string{"msg": "hello world", "q": "its", "e": ""}}},
		{give: `run infra/build msg=“typed on a phone”`, want: domain.ChatCommand{Verb: domain.VerbRun, Team: "infra", Workflow: "build", Params: map[string]string{"msg": "typed on a phone"}}},
		{give: `run infra/build "a b=c d"`, want: domain.ChatCommand{Verb: domain.VerbRun, Team: "infra", Workflow: "build", Params: map[string]string{"a b": "c d"}}},
		{give: `run infra/build x="say \"hi\""`, want: domain.ChatCommand{Verb: domain.VerbRun, Team: "infra", Workflow: "build", Params: map[string]string{"x": `say "hi"`}}},
		{give: "list infra", want: domain.ChatCommand{Verb: domain.VerbList, Team: "infra"}},
		{give: "notify infra", want: domain.ChatCommand{Verb: domain.VerbNotify, Team: "infra"}},
		{give: "notify infra OFF", want: domain.ChatCommand{Verb: domain.VerbNotify, Team: "infra", Off: true}},
		{give: "run", invalid: true},
		{give: "run infra", invalid: true},
		{give: "run infra/", invalid: true},
		{give: "run /build", invalid: true},
		{give: "run a/b/c", invalid: true},
		{give: "run infra/build novalue", invalid: true},
		{give: "run infra/build =x", invalid: true},
		{give: `run infra/build msg="open`, invalid: true},
		{give: "list", invalid: true},
		{give: "list a b", invalid: true},
		{give: "notify", invalid: true},
		{give: "notify infra now", invalid: true},
		{give: "run infra/build " + strings.Repeat("k=v ", 51), invalid: true},
		{give: "run infra/build x=" + strings.Repeat("v", 4000), invalid: true},
	}
	for _, tt := range tests {
		got, err := domain.ParseChatCommand(tt.give)
		if tt.invalid {
			assert.True(t, apperr.HasReason(err, apperr.RequestInvalid), "%q: %v", tt.give, err)
			continue
		}
		require.NoError(t, err, tt.give)
		assert.Equal(t, tt.want, got, tt.give)
	}
}

func TestSignedState(t *testing.T) {
	t.Parallel()
	key := domain.StateKey([]byte("0123456789abcdef0123456789abcdef"), "chat install")
	now := time.Unix(1_700_000_000, 0)
	good := domain.SignState(key, "chat", now.Add(domain.InstallStateTTL))
	tampered := []byte(good)
	tampered[3] ^= 1
	tests := []struct {
		name  string
		key   []byte
		state string
		at    time.Time
		ok    bool
	}{
		{"good", key, good, now, true},
		{"just before it expires", key, good, now.Add(domain.InstallStateTTL - time.Second), true},
		{"expired", key, good, now.Add(domain.InstallStateTTL), false},
		{"another flow's key", domain.StateKey([]byte("0123456789abcdef0123456789abcdef"), "codehost install"), good, now, false},
		{"tampered", key, string(tampered), now, false},
		{"empty", key, "", now, false},
		{"no signature", key, strings.Split(good, ".")[0], now, false},
		{"garbage", key, "!!.??", now, false},
	}
	for _, tt := range tests {
		payload, err := domain.VerifyState(tt.key, tt.state, tt.at)
		if !tt.ok {
			assert.ErrorIs(t, err, domain.ErrBadState, tt.name)
			continue
		}
		require.NoError(t, err, tt.name)
		assert.Equal(t, "chat", payload, tt.name)
	}
}

func TestActionValue(t *testing.T) {
	t.Parallel()
	team, id, err := domain.ParseActionValue(domain.ActionValue("rel", "0190-abc.1-1"))
	require.NoError(t, err)
	assert.Equal(t, []string{"rel", "0190-abc.1-1"}, []string{team, id})
	for _, bad := range []string{"", "rel", "/x", "rel/"} {
		_, _, err := domain.ParseActionValue(bad)
		assert.True(t, apperr.HasReason(err, apperr.RequestInvalid), bad)
	}
}
