package chatapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

// Message is a message in the platform's format: text and blocks.
type Message struct {
	Text   string `json:"text"`
	Blocks []any  `json:"blocks,omitempty"`
}

// View is a modal or App Home view in the platform's format.
type View map[string]any

func plain(s string) map[string]any { return map[string]any{"type": "plain_text", "text": s} }

func section(s string) map[string]any {
	return map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": s}}
}

// MessageOf writes m in the platform's format: a section per paragraph, the buttons in one
// actions block.
func MessageOf(m domain.ChatMessage) Message {
	out := Message{Text: m.Text}
	for _, s := range m.Sections {
		out.Blocks = append(out.Blocks, section(s))
	}
	if len(m.Buttons) > 0 {
		if len(out.Blocks) == 0 {
			out.Blocks = append(out.Blocks, section(m.Text))
		}
		els := make([]any, len(m.Buttons))
		for i, b := range m.Buttons {
			el := map[string]any{"type": "button", "action_id": b.ActionID, "text": plain(b.Text), "value": b.Value}
			if b.Style != "" {
				el["style"] = b.Style
			}
			els[i] = el
		}
		out.Blocks = append(out.Blocks, map[string]any{"type": "actions", "elements": els})
	}
	return out
}

// Reply is the answer to a slash command: shown to everyone in the channel or only to
// its sender.
func Reply(m domain.ChatMessage, inChannel bool) map[string]any {
	msg := MessageOf(m)
	kind := "ephemeral"
	if inChannel {
		kind = "in_channel"
	}
	out := map[string]any{"response_type": kind, "text": msg.Text}
	if len(msg.Blocks) > 0 {
		out["blocks"] = msg.Blocks
	}
	return out
}

// ModalOf writes the modal m: a plain text input per input, its block and action ids the
// input's name.
func ModalOf(m domain.ChatModal) View {
	blocks := make([]any, 0, len(m.Inputs))
	for _, in := range m.Inputs {
		el := map[string]any{"type": "plain_text_input", "action_id": in.Name}
		if in.Initial != "" {
			el["initial_value"] = in.Initial
		}
		blocks = append(blocks, map[string]any{"type": "input", "block_id": in.Name, "optional": in.Optional, "label": plain(in.Label), "element": el})
	}
	return View{"type": "modal", "callback_id": m.CallbackID, "title": plain(trim(m.Title, 24)), "submit": plain(m.Submit),
		"close": plain("Cancel"), "private_metadata": m.Metadata, "blocks": blocks}
}

// HomeOf writes an App Home view of sections.
func HomeOf(sections []string) View {
	blocks := make([]any, len(sections))
	for i, s := range sections {
		blocks[i] = section(s)
	}
	return View{"type": "home", "blocks": blocks}
}

// trim cuts s to n characters: the platform refuses longer titles.
func trim(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// ErrMalformed is the error of an inbound request the platform would not send.
var ErrMalformed = errors.New("malformed chat request")

// Command is a slash command as the platform posts it (form-encoded).
type Command struct {
	WorkspaceID string
	UserID      string
	ChannelID   string
	Command     string
	Text        string
	TriggerID   string
	ResponseURL string
}

// ParseCommand reads a slash command's form.
func ParseCommand(body []byte) (Command, error) {
	f, err := url.ParseQuery(string(body))
	if err != nil {
		return Command{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	c := Command{WorkspaceID: f.Get("team_id"), UserID: f.Get("user_id"), ChannelID: f.Get("channel_id"), Command: f.Get("command"),
		Text: f.Get("text"), TriggerID: f.Get("trigger_id"), ResponseURL: f.Get("response_url")}
	if c.WorkspaceID == "" || c.UserID == "" || c.ChannelID == "" {
		return Command{}, fmt.Errorf("%w: team_id, user_id and channel_id are required", ErrMalformed)
	}
	return c, nil
}

// Event is an Events API request: a url_verification challenge or an event callback.
type Event struct {
	// Type is "url_verification" or "event_callback" (others are possible).
	Type        string
	Challenge   string
	WorkspaceID string
	EventID     string
	// EventType is the callback's event type, e.g. "app_home_opened"; User its user.
	EventType string
	User      string
	Tab       string
}

// Event types Baton handles.
const (
	EventURLVerification = "url_verification"
	EventCallback        = "event_callback"
)

// ParseEvent reads an Events API body.
func ParseEvent(body []byte) (Event, error) {
	var e struct {
		Type      string `json:"type"`
		Challenge string `json:"challenge"`
		TeamID    string `json:"team_id"`
		EventID   string `json:"event_id"`
		Event     struct {
			Type string `json:"type"`
			User string `json:"user"`
			Tab  string `json:"tab"`
		} `json:"event"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return Event{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if e.Type == "" {
		return Event{}, fmt.Errorf("%w: no type", ErrMalformed)
	}
	return Event{Type: e.Type, Challenge: e.Challenge, WorkspaceID: e.TeamID, EventID: e.EventID,
		EventType: e.Event.Type, User: e.Event.User, Tab: e.Event.Tab}, nil
}

// Interaction is an interactivity request: a block action (a button) or a view submission
// (a modal).
type Interaction struct {
	// Type is "block_actions" or "view_submission" (others are possible).
	Type        string
	WorkspaceID string
	UserID      string
	ChannelID   string
	MessageTS   string
	TriggerID   string
	// ActionID and Value are the first action of a block action.
	ActionID string
	Value    string
	// CallbackID, Metadata and Values are a submitted view's: its inputs' values by name.
	CallbackID string
	Metadata   string
	Values     map[string]string
}

// ParseInteraction reads an interactivity request's form, whose field payload is the
// interaction as JSON.
func ParseInteraction(body []byte) (Interaction, error) {
	f, err := url.ParseQuery(string(body))
	if err != nil {
		return Interaction{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	var p struct {
		Type      string `json:"type"`
		TriggerID string `json:"trigger_id"`
		Team      struct {
			ID string `json:"id"`
		} `json:"team"`
		User struct {
			ID string `json:"id"`
		} `json:"user"`
		Channel struct {
			ID string `json:"id"`
		} `json:"channel"`
		Container struct {
			ChannelID string `json:"channel_id"`
			MessageTS string `json:"message_ts"`
		} `json:"container"`
		Message struct {
			TS string `json:"ts"`
		} `json:"message"`
		Actions []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"actions"`
		View struct {
			CallbackID      string `json:"callback_id"`
			PrivateMetadata string `json:"private_metadata"`
			State           struct {
				Values map[string]map[string]struct {
					Value *string `json:"value"`
				} `json:"values"`
			} `json:"state"`
		} `json:"view"`
	}
	raw := f.Get("payload")
	if raw == "" {
		return Interaction{}, fmt.Errorf("%w: no payload", ErrMalformed)
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return Interaction{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if p.Type == "" || p.Team.ID == "" || p.User.ID == "" {
		return Interaction{}, fmt.Errorf("%w: type, team and user are required", ErrMalformed)
	}
	in := Interaction{Type: p.Type, WorkspaceID: p.Team.ID, UserID: p.User.ID, TriggerID: p.TriggerID,
		ChannelID: first(p.Channel.ID, p.Container.ChannelID), MessageTS: first(p.Message.TS, p.Container.MessageTS),
		CallbackID: p.View.CallbackID, Metadata: p.View.PrivateMetadata}
	if len(p.Actions) > 0 {
		in.ActionID, in.Value = p.Actions[0].ActionID, p.Actions[0].Value
	}
	if len(p.View.State.Values) > 0 {
		in.Values = map[string]string{}
		for _, block := range p.View.State.Values {
			for name, v := range block {
				if v.Value != nil {
					in.Values[name] = *v.Value
				}
			}
		}
	}
	return in, nil
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
