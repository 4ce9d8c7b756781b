package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

// ChatEvent is an event the platform sends (Events API).
type ChatEvent struct {
	WorkspaceID string
	// Type is the event's type, e.g. app_home_opened; User its user.
	Type string
	User string
}

// Event handles an event callback. Types Baton does not handle are ignored.
func (c *Chat) Event(ctx context.Context, e ChatEvent) error {
	if e.Type != "app_home_opened" || e.User == "" {
		return nil
	}
	token, err := c.botToken(ctx, e.WorkspaceID)
	if err != nil {
		return err
	}
	return c.Platform.PublishHome(ctx, token, e.User, c.home(ctx, e.WorkspaceID, e.User))
}

// home is the App Home of a chat user: who they act as, their teams, how to run.
func (c *Chat) home(ctx context.Context, workspace, user string) []string {
	p, err := c.actor(ctx, workspace, user)
	if err != nil {
		msg := "Baton cannot link you to a Baton user yet."
		if e, ok := apperr.As(err); ok {
			msg = e.Message
		}
		return []string{"*Baton*", msg, domain.ChatHelp}
	}
	teams := slices.Sorted(maps.Keys(p.Teams))
	lines := make([]string, len(teams))
	for i, t := range teams {
		lines[i] = fmt.Sprintf("• *%s* (%s) — `/baton list %s`", t, p.Teams[t], t)
	}
	if len(lines) == 0 {
		lines = []string{"You belong to no team yet."}
	}
	return []string{fmt.Sprintf("*Baton* — you act as %s (%s).", cmp.Or(p.Name, p.ID), p.Email),
		"Your teams:\n" + strings.Join(lines, "\n"), domain.ChatHelp}
}

// ChatInteraction is a button clicked or a modal submitted.
type ChatInteraction struct {
	ChatRequest
	// Type is block_actions or view_submission.
	Type      string
	MessageTS string
	ActionID  string
	Value     string
	// CallbackID, Metadata and Values are a submitted modal's.
	CallbackID string
	Metadata   string
	Values     map[string]string
}

// Interaction types Baton handles.
const (
	InteractionBlockActions   = "block_actions"
	InteractionViewSubmission = "view_submission"
)

// Interact handles an interaction. Refusals are shown to the user alone; an error is what
// the platform should see fail.
func (c *Chat) Interact(ctx context.Context, in ChatInteraction) error {
	switch {
	case in.Type == InteractionViewSubmission && in.CallbackID == domain.RunModalID:
		return c.submitModal(ctx, in)
	case in.Type == InteractionBlockActions && (in.ActionID == domain.ActionApprove || in.ActionID == domain.ActionReject):
		return c.decide(ctx, in)
	}
	return nil
}

func (c *Chat) submitModal(ctx context.Context, in ChatInteraction) error {
	var meta runMeta
	if err := json.Unmarshal([]byte(in.Metadata), &meta); err != nil || meta.Team == "" || meta.Workflow == "" {
		return apperr.New(apperr.RequestInvalid, "The form names no workflow.")
	}
	in.ChannelID = cmp.Or(in.ChannelID, meta.Channel)
	p, err := c.actor(ctx, in.WorkspaceID, in.UserID)
	if err == nil && !p.Can(authScope(meta.Team, meta.Workflow), "workflowrun", "write") {
		err = apperr.New(apperr.PermissionDenied, "You may not run workflows of team '%s'.", meta.Team)
	}
	var id string
	if err == nil {
		values := map[string]string{}
		for k, v := range in.Values {
			if v != "" {
				values[k] = v
			}
		}
		id, err = c.submit(ctx, p, in.ChatRequest, meta.Team, meta.Workflow, values)
	}
	token, terr := c.botToken(ctx, in.WorkspaceID)
	if terr != nil {
		return terr
	}
	if err != nil {
		return c.tell(ctx, token, in.ChatRequest, err)
	}
	_, err = c.Platform.PostMessage(ctx, token, in.ChannelID, domain.ChatMessage{Text: c.startedText(p, meta.Team, meta.Workflow, id)})
	return err
}

// tell shows the user why what they did was refused.
func (c *Chat) tell(ctx context.Context, token string, r ChatRequest, cause error) error {
	text := c.refusal(cause).Message.Text
	if r.ChannelID == "" {
		return nil
	}
	return c.Platform.PostEphemeral(ctx, token, r.ChannelID, r.UserID, text)
}

// decide decides the action a button names as the chat user's Baton user, then shows the
// vote on the message, or the refusal to the user alone.
func (c *Chat) decide(ctx context.Context, in ChatInteraction) error {
	team, id, err := domain.ParseActionValue(in.Value)
	if err != nil {
		return err
	}
	token, err := c.botToken(ctx, in.WorkspaceID)
	if err != nil {
		return err
	}
	approved := in.ActionID == domain.ActionApprove
	p, err := c.actor(ctx, in.WorkspaceID, in.UserID)
	if err == nil {
		err = c.Actions.Decide(ctx, p, team, id, approved, "Decided in chat.")
	}
	if err != nil {
		if apperr.KindOf(err) == apperr.KindUnavailable {
			return err
		}
		return c.tell(ctx, token, in.ChatRequest, err)
	}
	if in.ChannelID == "" || in.MessageTS == "" {
		return nil
	}
	m := c.actionMessage(ctx, id, domain.ChatChannel{WorkspaceID: in.WorkspaceID, ChannelID: in.ChannelID}, in.MessageTS)
	if m.Closed {
		// The outcome is on the message already.
		return nil
	}
	verb := "✅ approved"
	if approved {
		m.Votes++
	} else {
		verb = "❌ rejected"
	}
	m.Text += "\n" + fmt.Sprintf("%s by %s", verb, cmp.Or(p.Name, p.Email))
	msg := domain.ChatMessage{Text: m.Text, Sections: []string{m.Text}}
	// Buttons stay while more approvals are needed: a rejection, or the last approval,
	// decides the action.
	if approved && m.Votes < max(m.Quorum, 1) {
		msg.Buttons = actionButtons(team, id)
	}
	if err := c.Platform.UpdateMessage(ctx, token, in.ChannelID, in.MessageTS, msg); err != nil {
		c.Log.Warn("cannot update an action's chat message", "action", id, "error", err)
	}
	if err := c.Store.SaveActionMessage(ctx, m); err != nil {
		c.Log.Warn("cannot remember an action's chat message", "action", id, "error", err)
	}
	return nil
}

// actionMessage is the message of action id in ch, as kept, or a new record of it.
func (c *Chat) actionMessage(ctx context.Context, id string, ch domain.ChatChannel, ts string) ActionMessage {
	ms, err := c.Store.FindActionMessages(ctx, id)
	if err == nil {
		for _, m := range ms {
			if m.Channel == ch {
				return m
			}
		}
	}
	return ActionMessage{ActionID: id, Channel: ch, TS: ts, Text: "Action `" + id + "`"}
}

func actionButtons(team, id string) []domain.ChatButton {
	v := domain.ActionValue(team, id)
	return []domain.ChatButton{
		{ActionID: domain.ActionApprove, Text: "Approve", Value: v, Style: "primary"},
		{ActionID: domain.ActionReject, Text: "Reject", Value: v, Style: "danger"},
	}
}

// RunStatus posts the end of a run started from chat to its channel. eventID is the
// status event's id: a redelivered event is not posted again. A chat run's first events
// record its channel (from its label) before any of its actions is announced: a run's
// events come in order, and the submit's own record may be written after the first.
func (c *Chat) RunStatus(ctx context.Context, eventID string, run events.WorkflowRun) error {
	// Only the chat trigger's runs count: anyone may label a run they submit. No other run
	// has a channel kept (submit and the labelled branch below keep them), so the status
	// events of all the others cost no read of the store.
	if run.Trigger != "chat" {
		return nil
	}
	ch, labelled := domain.ParseChatChannel(run.Labels[domain.ChatChannelLabel])
	if labelled && run.Phase != "completed" && run.Phase != "finalized" {
		_, err := c.Store.FindRunChannel(ctx, run.ID)
		if errors.Is(err, domain.ErrChatNotFound) {
			return c.Store.SaveRunChannel(ctx, run.ID, ch, c.Now().Add(runChannelTTL))
		}
		return err
	}
	if run.Phase != "completed" {
		return nil
	}
	if !labelled {
		var err error
		if ch, err = c.Store.FindRunChannel(ctx, run.ID); errors.Is(err, domain.ErrChatNotFound) {
			return nil
		} else if err != nil {
			return err
		}
	}
	text := domain.RunStatusText(run.Team, run.WorkflowName, run.ID, run.Status, c.runLink(run.Team, run.ID))
	_, err := c.post(ctx, eventID, ch, domain.ChatMessage{Text: text})
	return err
}

// ActionStatus posts an action opened on a run started from chat, or of a team with a
// channel, with Approve and Reject buttons; once it is decided, its messages show the
// outcome without buttons.
func (c *Chat) ActionStatus(ctx context.Context, eventID string, a events.Action) error {
	if a.Status != "submitted" {
		return c.closeAction(ctx, eventID, a)
	}
	var channels []domain.ChatChannel
	for _, find := range []func() (domain.ChatChannel, error){
		func() (domain.ChatChannel, error) { return c.Store.FindRunChannel(ctx, a.WorkflowRunRef) },
		func() (domain.ChatChannel, error) { return c.Store.FindTeamChannel(ctx, a.Team) },
	} {
		ch, err := find()
		if errors.Is(err, domain.ErrChatNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if !slices.Contains(channels, ch) {
			channels = append(channels, ch)
		}
	}
	text := actionOpenText(a)
	msg := domain.ChatMessage{Text: text, Sections: []string{text}, Buttons: actionButtons(a.Team, a.ID)}
	for _, ch := range channels {
		ts, err := c.post(ctx, eventID+"@"+ch.WorkspaceID+"/"+ch.ChannelID, ch, msg)
		if err != nil {
			return err
		}
		if ts == "" {
			continue
		}
		if err := c.Store.SaveActionMessage(ctx, ActionMessage{ActionID: a.ID, Channel: ch, TS: ts, Text: text, Quorum: a.NumberOfApprovers}); err != nil {
			return err
		}
	}
	return nil
}

func actionOpenText(a events.Action) string {
	var b strings.Builder
	fmt.Fprintf(&b, "✋ *%s/%s* waits for %s at task *%s* (run `%s`)", a.Team, cmp.Or(a.WorkflowName, a.WorkflowRef), a.Type, a.TaskName, a.WorkflowRunRef)
	if a.Type == "approval" && a.NumberOfApprovers > 1 {
		fmt.Fprintf(&b, " — %d approvals needed", a.NumberOfApprovers)
	}
	if a.ApproverGroupRef != "" {
		fmt.Fprintf(&b, ", by group *%s*", a.ApproverGroupRef)
	}
	if a.Instructions != "" {
		b.WriteString("\n> " + strings.ReplaceAll(a.Instructions, "\n", "\n> "))
	}
	if a.Type == "manual" && len(a.Params) > 0 && string(a.Params) != "null" && string(a.Params) != "[]" {
		// Buttons carry no values: a form with required fields is completed in Baton.
		b.WriteString("\nIts form is filled in Baton.")
	}
	return b.String()
}

// closeAction shows a decided action's outcome on its messages, without buttons.
func (c *Chat) closeAction(ctx context.Context, eventID string, a events.Action) error {
	ms, err := c.Store.FindActionMessages(ctx, a.ID)
	if err != nil {
		return err
	}
	for _, m := range ms {
		key := eventID + "@" + m.Channel.WorkspaceID + "/" + m.Channel.ChannelID
		if done, err := c.Store.Posted(ctx, key); err != nil || done {
			if err != nil {
				return err
			}
			continue
		}
		token, err := c.botToken(ctx, m.Channel.WorkspaceID)
		if err != nil {
			return ignoreRefusal(c, err)
		}
		text := m.Text + "\n" + fmt.Sprintf("*%s*", a.Status)
		if a.StatusMessage != "" {
			text += ": " + a.StatusMessage
		}
		if err := c.Platform.UpdateMessage(ctx, token, m.Channel.ChannelID, m.TS, domain.ChatMessage{Text: text, Sections: []string{text}}); err != nil {
			if err := ignoreRefusal(c, err); err != nil {
				return err
			}
		}
		m.Text, m.Closed = text, true
		if err := c.Store.SaveActionMessage(ctx, m); err != nil {
			return err
		}
		if err := c.Store.MarkPosted(ctx, key, c.Now().Add(postedTTL)); err != nil {
			return err
		}
	}
	return nil
}

// post posts msg to ch once per key: a key already posted is skipped. It answers the new
// message's ts, or "" when none was posted.
func (c *Chat) post(ctx context.Context, key string, ch domain.ChatChannel, msg domain.ChatMessage) (string, error) {
	done, err := c.Store.Posted(ctx, key)
	if err != nil || done {
		return "", err
	}
	token, err := c.botToken(ctx, ch.WorkspaceID)
	if err != nil {
		return "", ignoreRefusal(c, err)
	}
	ts, err := c.Platform.PostMessage(ctx, token, ch.ChannelID, msg)
	if err != nil {
		return "", ignoreRefusal(c, err)
	}
	return ts, c.Store.MarkPosted(ctx, key, c.Now().Add(postedTTL))
}

// ignoreRefusal drops (and logs) an error trying again cannot mend — the platform refused
// (a channel gone, a token revoked), the app not installed — and keeps the others (the
// platform down) for the consumer to retry.
func ignoreRefusal(c *Chat, err error) error {
	if errors.Is(err, domain.ErrChatRefused) || apperr.HasReason(err, apperr.IntegrationNotLinked) {
		c.Log.Warn("chat message not posted", "error", err)
		return nil
	}
	return err
}

func authScope(team, workflow string) auth.Scope { return auth.Scope{Team: team, Workflow: workflow} }
