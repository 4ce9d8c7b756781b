// Package chatapi is the chat platform's wire format, and only here: the client of its Web
// API (OAuth code exchange, user lookup, messages, views) and the shapes of what it sends
// Baton (slash commands, events, interactions). The platform is Slack-like: Web API
// methods under one base URL, form or JSON bodies, a bot token as bearer, answers
// {"ok": true|false, "error": …}.
package chatapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

// maxAnswer bounds how much of an answer is read.
const maxAnswer = 1 << 20

// Error is the platform's refusal of a call: its answer had ok false (Code is its
// "error"), or an HTTP status other than 200 below 500.
type Error struct {
	Method string
	Code   string
}

func (e *Error) Error() string { return fmt.Sprintf("chat platform %s: %s", e.Method, e.Code) }

// Unwrap makes every refusal domain.ErrChatRefused.
func (e *Error) Unwrap() error { return domain.ErrChatRefused }

// unavailable is the error of a call that got no usable answer: the platform is down,
// slow or answered 5xx or 429. Such a call may succeed if tried again.
func unavailable(method string, cause error) error {
	return apperr.Wrap(apperr.DependencyUnavailable, fmt.Errorf("chat platform %s: %w", method, cause), "The chat platform is unavailable; try again.")
}

// Client calls the platform's Web API.
type Client struct {
	base string
	http *http.Client
}

// New returns the client of the Web API at base (e.g. https://slack.com/api); timeout
// bounds each call.
func New(base string, timeout time.Duration) *Client {
	return &Client{base: strings.TrimRight(base, "/"), http: &http.Client{Timeout: timeout}}
}

// OAuthAccess exchanges an install's code for the workspace's bot token (oauth.v2.access).
func (c *Client) OAuthAccess(ctx context.Context, clientID, clientSecret, code, redirectURI string) (domain.ChatInstall, error) {
	var out struct {
		AccessToken string `json:"access_token"`
		Scope       string `json:"scope"`
		BotUserID   string `json:"bot_user_id"`
		Team        struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"team"`
	}
	form := url.Values{"client_id": {clientID}, "client_secret": {clientSecret}, "code": {code}}
	if redirectURI != "" {
		form.Set("redirect_uri", redirectURI)
	}
	if err := c.call(ctx, "oauth.v2.access", "", form, &out); err != nil {
		return domain.ChatInstall{}, err
	}
	if out.AccessToken == "" || out.Team.ID == "" {
		return domain.ChatInstall{}, &Error{Method: "oauth.v2.access", Code: "no_bot_token"}
	}
	return domain.ChatInstall{WorkspaceID: out.Team.ID, WorkspaceName: out.Team.Name, BotUserID: out.BotUserID, BotToken: out.AccessToken, Scope: out.Scope}, nil
}

// UserInfo looks a user up (users.info); the email needs the users:read.email scope.
func (c *Client) UserInfo(ctx context.Context, token, user string) (domain.ChatUser, error) {
	var out struct {
		User struct {
			ID      string `json:"id"`
			Deleted bool   `json:"deleted"`
			Profile struct {
				Email string `json:"email"`
			} `json:"profile"`
		} `json:"user"`
	}
	if err := c.call(ctx, "users.info", token, url.Values{"user": {user}}, &out); err != nil {
		return domain.ChatUser{}, err
	}
	return domain.ChatUser{ID: out.User.ID, Email: out.User.Profile.Email, Deleted: out.User.Deleted}, nil
}

// PostMessage posts m to channel (chat.postMessage) and answers the message's ts.
func (c *Client) PostMessage(ctx context.Context, token, channel string, dm domain.ChatMessage) (string, error) {
	m := MessageOf(dm)
	var out struct {
		TS string `json:"ts"`
	}
	body := map[string]any{"channel": channel, "text": m.Text}
	if len(m.Blocks) > 0 {
		body["blocks"] = m.Blocks
	}
	err := c.call(ctx, "chat.postMessage", token, body, &out)
	return out.TS, err
}

// UpdateMessage replaces message ts of channel with m (chat.update).
func (c *Client) UpdateMessage(ctx context.Context, token, channel, ts string, dm domain.ChatMessage) error {
	m := MessageOf(dm)
	body := map[string]any{"channel": channel, "ts": ts, "text": m.Text, "blocks": m.Blocks}
	if m.Blocks == nil {
		body["blocks"] = []any{}
	}
	return c.call(ctx, "chat.update", token, body, nil)
}

// PostEphemeral shows text to user alone in channel (chat.postEphemeral).
func (c *Client) PostEphemeral(ctx context.Context, token, channel, user, text string) error {
	return c.call(ctx, "chat.postEphemeral", token, map[string]any{"channel": channel, "user": user, "text": text}, nil)
}

// OpenView opens a modal for the interaction triggerID names (views.open).
func (c *Client) OpenView(ctx context.Context, token, triggerID string, m domain.ChatModal) error {
	return c.call(ctx, "views.open", token, map[string]any{"trigger_id": triggerID, "view": ModalOf(m)}, nil)
}

// PublishHome publishes user's App Home view (views.publish), of sections.
func (c *Client) PublishHome(ctx context.Context, token, user string, sections []string) error {
	return c.call(ctx, "views.publish", token, map[string]any{"user_id": user, "view": HomeOf(sections)}, nil)
}

// call sends a Web API method: a form (url.Values) or JSON body, token as bearer when not
// empty, and decodes an ok answer into out.
func (c *Client) call(ctx context.Context, method, token string, in, out any) error {
	var (
		body        io.Reader
		contentType string
	)
	switch in := in.(type) {
	case url.Values:
		body, contentType = strings.NewReader(in.Encode()), "application/x-www-form-urlencoded"
	default:
		raw, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode %s: %w", method, err)
		}
		body, contentType = bytes.NewReader(raw), "application/json; charset=utf-8"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/"+method, body)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	req.Header.Set("Content-Type", contentType)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return unavailable(method, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	switch {
	case err != nil:
		return unavailable(method, err)
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return unavailable(method, fmt.Errorf("status %d", resp.StatusCode))
	case resp.StatusCode != http.StatusOK:
		return &Error{Method: method, Code: fmt.Sprintf("http_%d", resp.StatusCode)}
	}
	var ok struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(raw, &ok); err != nil {
		return unavailable(method, fmt.Errorf("unreadable answer: %w", err))
	}
	if !ok.OK {
		return &Error{Method: method, Code: ok.Error}
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return unavailable(method, fmt.Errorf("unreadable answer: %w", err))
		}
	}
	return nil
}
