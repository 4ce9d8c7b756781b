package domain

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/baton-flow/baton/libs/apperr"
)

// The chat platform's rules as Baton reads them (API.md §7): how its requests are signed,
// the slash command's grammar, the install flow's signed state, and the messages Baton
// posts, in terms of their content (package chatapi writes them in the platform's format).

// ChatSignatureWindow is how far a chat request's timestamp may be from now, either way.
const ChatSignatureWindow = 5 * time.Minute

// SignChatRequest is the chat platform's signature of a request: "v0=" and the hex
// HMAC-SHA256 of "v0:<timestamp>:<raw body>" under the signing secret.
func SignChatRequest(secret, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("v0:" + timestamp + ":"))
	m.Write(body)
	return "v0=" + hex.EncodeToString(m.Sum(nil))
}

// VerifyChatRequest checks a chat request's signature over its exact raw body (in
// constant time) and that its timestamp is within ChatSignatureWindow of now. Any failure
// is INTEGRATION_INVALID_SIGNATURE, without saying which part failed.
func VerifyChatRequest(secret, timestamp, signature string, body []byte, now time.Time) error {
	if secret == "" {
		return apperr.New(apperr.IntegrationInvalidSignature, "The chat integration has no signing secret: chat requests are refused.")
	}
	if timestamp == "" || signature == "" {
		return apperr.New(apperr.IntegrationInvalidSignature, "The chat request is not signed.")
	}
	sec, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return apperr.New(apperr.IntegrationInvalidSignature, "The chat request's timestamp is not valid.")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > ChatSignatureWindow || d < -ChatSignatureWindow {
		return apperr.New(apperr.IntegrationInvalidSignature, "The chat request's timestamp is more than 5 minutes off.")
	}
	if !hmac.Equal([]byte(SignChatRequest(secret, timestamp, body)), []byte(signature)) {
		return apperr.New(apperr.IntegrationInvalidSignature, "The chat request's signature is not valid.")
	}
	return nil
}

// Limits of a slash command's text.
const (
	maxCommandText   = 4000
	maxCommandParams = 50
)

// Verbs of the slash command.
const (
	VerbRun    = "run"
	VerbList   = "list"
	VerbHelp   = "help"
	VerbNotify = "notify"
)

// ChatCommand is a parsed slash command: `run <team>/<workflow> [key=value …]`,
// `list <team>`, `notify <team> [off]`, or help (anything else).
type ChatCommand struct {
	Verb     string
	Team     string
	Workflow string
	Params   map[string]string
	// Off stops a team's notifications (`notify <team> off`).
	Off bool
}

// ParseChatCommand reads a slash command's text. An unknown or empty verb is help; a
// known verb used wrongly is REQUEST_INVALID, whose message says how to use it.
func ParseChatCommand(text string) (ChatCommand, error) {
	if len(text) > maxCommandText {
		return ChatCommand{}, apperr.New(apperr.RequestInvalid, "The command is longer than %d characters.", maxCommandText)
	}
	words, err := splitWords(text)
	if err != nil {
		return ChatCommand{}, err
	}
	if len(words) == 0 {
		return ChatCommand{Verb: VerbHelp}, nil
	}
	verb, args := strings.ToLower(words[0]), words[1:]
	switch verb {
	case VerbRun:
		if len(args) == 0 {
			return ChatCommand{}, apperr.New(apperr.RequestInvalid, "Usage: run <team>/<workflow> [key=value …]")
		}
		team, wf, ok := strings.Cut(args[0], "/")
		if !ok || team == "" || wf == "" || strings.Contains(wf, "/") {
			return ChatCommand{}, apperr.New(apperr.RequestInvalid, "Name the workflow as <team>/<workflow>, not '%s'.", args[0])
		}
		if len(args)-1 > maxCommandParams {
			return ChatCommand{}, apperr.New(apperr.RequestInvalid, "At most %d parameters.", maxCommandParams)
		}
		params := map[string]string{}
		for _, kv := range args[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return ChatCommand{}, apperr.New(apperr.RequestInvalid, "Parameters are key=value, not '%s'.", kv)
			}
			params[k] = v
		}
		return ChatCommand{Verb: VerbRun, Team: team, Workflow: wf, Params: params}, nil
	case VerbList:
		if len(args) != 1 {
			return ChatCommand{}, apperr.New(apperr.RequestInvalid, "Usage: list <team>")
		}
		return ChatCommand{Verb: VerbList, Team: args[0]}, nil
	case VerbNotify:
		switch {
		case len(args) == 1:
			return ChatCommand{Verb: VerbNotify, Team: args[0]}, nil
		case len(args) == 2 && strings.EqualFold(args[1], "off"):
			return ChatCommand{Verb: VerbNotify, Team: args[0], Off: true}, nil
		}
		return ChatCommand{}, apperr.New(apperr.RequestInvalid, "Usage: notify <team> [off]")
	}
	return ChatCommand{Verb: VerbHelp}, nil
}

// splitWords splits text at blanks; double or single quotes keep blanks inside a word
// (`msg="hello world"` is one word, msg=hello world), and a backslash in double quotes
// escapes the next character. The chat platform sends typographic quotes as typed on
// phones; they count as plain ones.
func splitWords(text string) ([]string, error) {
	text = strings.NewReplacer("“", `"`, "”", `"`, "‘", "'", "’", "'").Replace(text)
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word
		quote rune
		esc   bool
	)
	for _, r := range text {
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
		case quote != 0 && r == quote:
			quote = 0
		case quote == '"' && r == '\\':
			esc = true
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case unicode.IsSpace(r):
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 || esc {
		return nil, apperr.New(apperr.RequestInvalid, "A quote is not closed.")
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

// ChatHelp is the text of `/baton help`.
const ChatHelp = "*Baton* — run workflows from chat:\n" +
	"• `/baton run <team>/<workflow> [key=value …]` starts a run (quote values with spaces: `msg=\"hello world\"`)\n" +
	"• `/baton list <team>` lists the team's workflows you can run\n" +
	"• `/baton notify <team>` posts the team's approvals to this channel (`/baton notify <team> off` stops)\n" +
	"• `/baton help` shows this"

// InstallStateTTL is how long an install flow's signed state is good for.
const InstallStateTTL = 10 * time.Minute

// ErrBadState is the error of a signed state that does not verify or has expired.
var ErrBadState = errors.New("the install state is not valid or has expired")

// StateKey derives the key of one install flow's states from the service's secret key,
// under the flow's own label, so a state signed for one flow never verifies for another
// and the secret key itself signs nothing.
func StateKey(secretKey []byte, label string) []byte {
	m := hmac.New(sha256.New, secretKey)
	m.Write([]byte("baton state key: " + label))
	return m.Sum(nil)
}

// SignState returns a state carrying payload that expires at exp: base64url of
// "<exp unix>.<payload>", a dot, base64url of its HMAC-SHA256 under key.
func SignState(key []byte, payload string, exp time.Time) string {
	body := base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(exp.Unix(), 10) + "." + payload))
	m := hmac.New(sha256.New, key)
	m.Write([]byte(body))
	return body + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// VerifyState returns the payload of a state SignState made under key, or ErrBadState
// when it was not, was altered, or has expired by now.
func VerifyState(key []byte, state string, now time.Time) (string, error) {
	body, sig, ok := strings.Cut(state, ".")
	if !ok || len(state) > 4096 {
		return "", ErrBadState
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return "", ErrBadState
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(body))
	if !hmac.Equal(got, m.Sum(nil)) {
		return "", ErrBadState
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return "", ErrBadState
	}
	expText, payload, ok := strings.Cut(string(raw), ".")
	exp, err := strconv.ParseInt(expText, 10, 64)
	if !ok || err != nil || !now.Before(time.Unix(exp, 0)) {
		return "", ErrBadState
	}
	return payload, nil
}

// ChatMessage is a message Baton posts: a text (the fallback and notification text),
// sections of text, and buttons.
type ChatMessage struct {
	Text     string
	Sections []string
	Buttons  []ChatButton
}

// ChatButton is a button of a message; clicking it sends ActionID and Value back.
type ChatButton struct {
	ActionID string
	Text     string
	Value    string
	// Style is "primary", "danger" or empty.
	Style string
}

// Button action ids of an approval message.
const (
	ActionApprove = "baton_approve"
	ActionReject  = "baton_reject"
)

// ChatModal is the run modal: one input per workflow parameter. Metadata comes back on
// submission (the workflow it runs, as "<team>/<workflow>").
type ChatModal struct {
	CallbackID string
	Title      string
	Submit     string
	Metadata   string
	Inputs     []ChatInput
}

// ChatInput is one input of a modal.
type ChatInput struct {
	Name     string
	Label    string
	Initial  string
	Optional bool
}

// RunModalID is the callback id of the run modal.
const RunModalID = "baton_run"

// ActionValue is a button's value naming an action: "<team>/<action id>".
func ActionValue(team, actionID string) string { return team + "/" + actionID }

// ParseActionValue reads a button's value ActionValue made.
func ParseActionValue(v string) (team, actionID string, err error) {
	team, id, ok := strings.Cut(v, "/")
	if !ok || team == "" || id == "" {
		return "", "", apperr.New(apperr.RequestInvalid, "The button's value '%s' names no action.", v)
	}
	return team, id, nil
}

// RunStatusText is the message posted when a run started from chat ends.
func RunStatusText(team, workflow, runID, status, link string) string {
	icon := map[string]string{"succeeded": "✅", "failed": "❌", "cancelled": "⏹", "timedout": "⏱", "invalid": "⚠️"}[status]
	s := fmt.Sprintf("%s Run `%s` of *%s/%s* %s", icon, runID, team, workflow, status)
	if link != "" {
		s += " — " + link
	}
	return strings.TrimSpace(s)
}

// ErrChatRefused is the error of a call the chat platform refused (its answer said not
// ok): a bad code, a revoked token, an unknown channel. Trying again does not help.
var ErrChatRefused = errors.New("the chat platform refused the call")

// ChatInstall is the chat app installed in a workspace: the workspace and its bot.
type ChatInstall struct {
	WorkspaceID   string
	WorkspaceName string
	BotUserID     string
	// BotToken is the bot's token, in the clear here and sealed at rest.
	BotToken    string
	Scope       string
	InstalledAt time.Time
}

// ChatUser is what Baton reads of a chat user.
type ChatUser struct {
	ID      string
	Email   string
	Deleted bool
}

// ChatLink links a chat user of a workspace to the Baton user they act as.
type ChatLink struct {
	WorkspaceID string
	ChatUserID  string
	UserID      string
	Email       string
	LinkedAt    time.Time
}

// ChatChannel is where a run's or a team's messages go: a workspace's channel.
type ChatChannel struct {
	WorkspaceID string
	ChannelID   string
}

// ChatChannelLabel is the label of a run started from chat naming its channel
// (ChatChannel.String). A run's status events carry its labels, so the channel is known
// from the run's first event on, however soon it comes after the submit.
const ChatChannelLabel = "chat.baton.io/channel"

// String writes the channel as "<workspace>/<channel>".
func (c ChatChannel) String() string { return c.WorkspaceID + "/" + c.ChannelID }

// ParseChatChannel reads what ChatChannel.String wrote.
func ParseChatChannel(s string) (ChatChannel, bool) {
	ws, ch, ok := strings.Cut(s, "/")
	if !ok || ws == "" || ch == "" {
		return ChatChannel{}, false
	}
	return ChatChannel{WorkspaceID: ws, ChannelID: ch}, true
}

// ErrChatNotFound is the error of a chat record (install, link, channel) not kept.
var ErrChatNotFound = errors.New("chat record not found")
