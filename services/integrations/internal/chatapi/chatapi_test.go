package chatapi_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/integrations/internal/chatapi"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

// seen is a request the platform received.
type seen struct {
	path, contentType, auth string
	body                    []byte
}

func platform(t *testing.T, status int, answer string) (*chatapi.Client, *[]seen) {
	t.Helper()
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		got = append(got, seen{path: r.URL.Path, contentType: r.Header.Get("Content-Type"), auth: r.Header.Get("Authorization"), body: raw})
		w.WriteHeader(status)
		_, _ = w.Write([]byte(answer))
	}))
	t.Cleanup(srv.Close)
	return chatapi.New(srv.URL+"/api/", 5*time.Second), &got
}

func TestClientCalls(t *testing.T) {
	t.Parallel()
	ctx := t.Context()

	c, got := platform(t, http.StatusOK, `{"ok":true,"access_token":"xoxb-1","token_type":"bot","scope":"commands","bot_user_id":"UB","team":{"id":"T9","name":"Acme"}}`)
	in, err := c.OAuthAccess(ctx, "cid", "csecret", "the-code", "https://baton.example.com/api/v2/integration/chat/auth")
	require.NoError(t, err)
	assert.Equal(t, domain.ChatInstall{WorkspaceID: "T9", WorkspaceName: "Acme", BotUserID: "UB", BotToken: "xoxb-1", Scope: "commands"}, in)
	require.Len(t, *got, 1)
	r := (*got)[0]
	assert.Equal(t, "/api/oauth.v2.access", r.path)
	assert.Equal(t, "application/x-www-form-urlencoded", r.contentType)
	assert.Empty(t, r.auth)
	form, err := url.ParseQuery(string(r.body))
	require.NoError(t, err)
	assert.Equal(t, "the-code", form.Get("code"))
	assert.Equal(t, "cid", form.Get("client_id"))
	assert.Equal(t, "csecret", form.Get("client_secret"))

	c, got = platform(t, http.StatusOK, `{"ok":true,"user":{"id":"U1","deleted":false,"profile":{"email":"ann@example.com","real_name":"Ann"}}}`)
	u, err := c.UserInfo(ctx, "xoxb-1", "U1")
	require.NoError(t, err)
	assert.Equal(t, domain.ChatUser{ID: "U1", Email: "ann@example.com"}, u)
	assert.Equal(t, "Bearer xoxb-1", (*got)[0].auth)
	assert.Equal(t, "user=U1", string((*got)[0].body))

	c, got = platform(t, http.StatusOK, `{"ok":true,"channel":"C1","ts":"1700000000.000100"}`)
	ts, err := c.PostMessage(ctx, "xoxb-1", "C1", domain.ChatMessage{Text: "approve?", Sections: []string{"approve?"},
		Buttons: []domain.ChatButton{{ActionID: domain.ActionApprove, Text: "Approve", Value: "rel/a1", Style: "primary"}}})
	require.NoError(t, err)
	assert.Equal(t, "1700000000.000100", ts)
	r = (*got)[0]
	assert.Equal(t, "/api/chat.postMessage", r.path)
	assert.Equal(t, "application/json; charset=utf-8", r.contentType)
	assert.JSONEq(t, `{"channel":"C1","text":"approve?","blocks":[
		{"type":"section","text":{"type":"mrkdwn","text":"approve?"}},
		{"type":"actions","elements":[{"type":"button","action_id":"baton_approve","text":{"type":"plain_text","text":"Approve"},"value":"rel/a1","style":"primary"}]}]}`, string(r.body))

	c, got = platform(t, http.StatusOK, `{"ok":true}`)
	require.NoError(t, c.UpdateMessage(ctx, "xoxb-1", "C1", "1.2", domain.ChatMessage{Text: "done"}))
	assert.JSONEq(t, `{"channel":"C1","ts":"1.2","text":"done","blocks":[]}`, string((*got)[0].body))
	require.NoError(t, c.OpenView(ctx, "xoxb-1", "trig", domain.ChatModal{CallbackID: "baton_run", Title: "Run a workflow with a long name", Submit: "Run", Metadata: "m",
		Inputs: []domain.ChatInput{{Name: "version", Label: "Version", Initial: "1"}}}))
	var view map[string]any
	require.NoError(t, json.Unmarshal((*got)[1].body, &view))
	assert.Equal(t, "trig", view["trigger_id"])
	v := view["view"].(map[string]any)
	assert.Equal(t, "modal", v["type"])
	assert.LessOrEqual(t, len([]rune(v["title"].(map[string]any)["text"].(string))), 24, "the platform refuses longer titles")
	require.NoError(t, c.PublishHome(ctx, "xoxb-1", "U1", []string{"hi"}))
	assert.JSONEq(t, `{"user_id":"U1","view":{"type":"home","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"hi"}}]}}`, string((*got)[2].body))
	require.NoError(t, c.PostEphemeral(ctx, "xoxb-1", "C1", "U1", "no"))
	assert.Equal(t, "/api/chat.postEphemeral", (*got)[3].path)
}

func TestClientErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		status      int
		answer      string
		refused     bool
		unavailable bool
	}{
		{"ok false", http.StatusOK, `{"ok":false,"error":"channel_not_found"}`, true, false},
		{"a client error", http.StatusNotFound, `not found`, true, false},
		{"down", http.StatusServiceUnavailable, ``, false, true},
		{"rate limited", http.StatusTooManyRequests, ``, false, true},
		{"not JSON", http.StatusOK, `<html>`, false, true},
	}
	for _, tt := range tests {
		c, _ := platform(t, tt.status, tt.answer)
		_, err := c.PostMessage(t.Context(), "xoxb-1", "C1", domain.ChatMessage{Text: "x"})
		require.Error(t, err, tt.name)
		assert.Equal(t, tt.refused, errors.Is(err, domain.ErrChatRefused), tt.name)
		assert.Equal(t, tt.unavailable, apperr.HasReason(err, apperr.DependencyUnavailable), tt.name)
		assert.NotContains(t, err.Error(), "xoxb-1", "%s: tokens stay out of errors", tt.name)
	}
	// Nobody listening.
	c := chatapi.New("http://127.0.0.1:1", time.Second)
	_, err := c.UserInfo(t.Context(), "xoxb-1", "U1")
	assert.True(t, apperr.HasReason(err, apperr.DependencyUnavailable), "%v", err)
}

func TestParseInteraction(t *testing.T) {
	t.Parallel()
	form := func(payload string) []byte { return []byte(url.Values{"payload": {payload}}.Encode()) }
	// A button click in a message, shaped as the platform documents block_actions.
	in, err := chatapi.ParseInteraction(form(`{"type":"block_actions","user":{"id":"U1","username":"ann","team_id":"T1"},
		"api_app_id":"A1","token":"x","container":{"type":"message","message_ts":"1548261231.000200","channel_id":"C1","is_ephemeral":false},
		"trigger_id":"12321423423.333649436676.d8c1bb837935619ccad0f624c448ffb3","team":{"id":"T1","domain":"acme"},
		"channel":{"id":"C1","name":"ops"},"message":{"type":"message","ts":"1548261231.000200","text":"approve?"},
		"response_url":"https://hooks.example.com/actions/T1/1/x",
		"actions":[{"action_id":"baton_approve","block_id":"b","text":{"type":"plain_text","text":"Approve"},"value":"rel/a1","type":"button","action_ts":"1548426417.840180"}]}`))
	require.NoError(t, err)
	assert.Equal(t, chatapi.Interaction{Type: "block_actions", WorkspaceID: "T1", UserID: "U1", ChannelID: "C1", MessageTS: "1548261231.000200",
		TriggerID: "12321423423.333649436676.d8c1bb837935619ccad0f624c448ffb3", ActionID: "baton_approve", Value: "rel/a1"}, in)

	// A submitted modal: values by block and action id; an empty optional input is null.
	in, err = chatapi.ParseInteraction(form(`{"type":"view_submission","team":{"id":"T1","domain":"acme"},"user":{"id":"U1","team_id":"T1"},
		"api_app_id":"A1","trigger_id":"t2","view":{"id":"V1","type":"modal","callback_id":"baton_run","private_metadata":"{\"team\":\"rel\"}",
		"state":{"values":{"version":{"version":{"type":"plain_text_input","value":"1.2"}},"note":{"note":{"type":"plain_text_input","value":null}}}},
		"hash":"156772938.1827394"}}`))
	require.NoError(t, err)
	assert.Equal(t, chatapi.Interaction{Type: "view_submission", WorkspaceID: "T1", UserID: "U1", TriggerID: "t2",
		CallbackID: "baton_run", Metadata: `{"team":"rel"}`, Values: map[string]string{"version": "1.2"}}, in)

	for _, bad := range [][]byte{[]byte("payload=%7B"), []byte("x=1"), form(`[]`), form(`{"type":"block_actions","team":{"id":"T1"}}`), []byte("%zz")} {
		_, err := chatapi.ParseInteraction(bad)
		assert.ErrorIs(t, err, chatapi.ErrMalformed, string(bad))
	}
}

func TestParseEventAndCommand(t *testing.T) {
	t.Parallel()
	e, err := chatapi.ParseEvent([]byte(`{"token":"x","team_id":"T1","api_app_id":"A1","event":{"type":"app_home_opened","user":"U1","channel":"D1","tab":"home"},
		"type":"event_callback","event_id":"Ev1","event_time":1}`))
	require.NoError(t, err)
	assert.Equal(t, chatapi.Event{Type: "event_callback", WorkspaceID: "T1", EventID: "Ev1", EventType: "app_home_opened", User: "U1", Tab: "home"}, e)
	for _, bad := range []string{``, `{`, `{}`, `"x"`, `{"type":1}`} {
		_, err := chatapi.ParseEvent([]byte(bad))
		assert.ErrorIs(t, err, chatapi.ErrMalformed, bad)
	}

	cmd, err := chatapi.ParseCommand([]byte("token=x&team_id=T1&team_domain=acme&channel_id=C1&channel_name=ops&user_id=U1&user_name=ann" +
		"&command=%2Fbaton&text=run+rel%2Fbuild+msg%3D%22hi+there%22&response_url=https%3A%2F%2Fhooks.example.com%2Fc&trigger_id=13345224609.738474920.8088930838d88f008e0"))
	require.NoError(t, err)
	assert.Equal(t, chatapi.Command{WorkspaceID: "T1", UserID: "U1", ChannelID: "C1", Command: "/baton", Text: `run rel/build msg="hi there"`,
		TriggerID: "13345224609.738474920.8088930838d88f008e0", ResponseURL: "https://hooks.example.com/c"}, cmd)
	for _, bad := range []string{"", "team_id=T1&user_id=U1", "%zz"} {
		_, err := chatapi.ParseCommand([]byte(bad))
		assert.ErrorIs(t, err, chatapi.ErrMalformed, bad)
	}
}

func TestReply(t *testing.T) {
	t.Parallel()
	assert.Equal(t, map[string]any{"response_type": "in_channel", "text": "started"}, chatapi.Reply(domain.ChatMessage{Text: "started"}, true))
	assert.Equal(t, "ephemeral", chatapi.Reply(domain.ChatMessage{Text: "no"}, false)["response_type"])
}
