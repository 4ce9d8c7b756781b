package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/param"
	"github.com/baton-flow/baton/libs/runsapi"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

// ChatStore keeps what the chat app needs across requests and replicas.
type ChatStore interface {
	// FirstSignature records a chat request's signature until until, and reports whether
	// it is new: false means the same signed request came before (a replay).
	FirstSignature(ctx context.Context, signature string, until time.Time) (bool, error)
	SaveChatInstall(ctx context.Context, in domain.ChatInstall) error
	// AnyChatInstall reports whether the app is installed in some workspace.
	AnyChatInstall(ctx context.Context) (bool, error)
	// FindChatInstall is domain.ErrChatNotFound for a workspace without the app.
	FindChatInstall(ctx context.Context, workspace string) (domain.ChatInstall, error)
	SaveChatLink(ctx context.Context, l domain.ChatLink) error
	// FindChatLink is domain.ErrChatNotFound for a chat user not linked yet.
	FindChatLink(ctx context.Context, workspace, user string) (domain.ChatLink, error)
	// SaveRunChannel remembers the channel a run was started from, until until.
	SaveRunChannel(ctx context.Context, runID string, ch domain.ChatChannel, until time.Time) error
	// FindRunChannel is domain.ErrChatNotFound for a run not started from chat.
	FindRunChannel(ctx context.Context, runID string) (domain.ChatChannel, error)
	// SetTeamChannel makes ch the channel of a team's approvals; nil stops them.
	SetTeamChannel(ctx context.Context, team string, ch *domain.ChatChannel) error
	// FindTeamChannel is domain.ErrChatNotFound for a team without one.
	FindTeamChannel(ctx context.Context, team string) (domain.ChatChannel, error)
	// Posted reports whether the message of key was posted; MarkPosted records it.
	Posted(ctx context.Context, key string) (bool, error)
	MarkPosted(ctx context.Context, key string, until time.Time) error
	// SaveActionMessage remembers a message posted for an action, to update it once the
	// action is decided; FindActionMessages lists them.
	SaveActionMessage(ctx context.Context, m ActionMessage) error
	FindActionMessages(ctx context.Context, actionID string) ([]ActionMessage, error)
}

// ActionMessage is a message posted for an action: where, what it says, and what it
// knows of the votes: how many approvals decide (Quorum), how many were clicked there
// (Votes), and whether the action is closed, after which the message has no buttons.
type ActionMessage struct {
	ActionID string
	Channel  domain.ChatChannel
	TS       string
	Text     string
	Quorum   int
	Votes    int
	Closed   bool
}

// ChatPlatform is the chat platform's Web API.
type ChatPlatform interface {
	OAuthAccess(ctx context.Context, clientID, clientSecret, code, redirectURI string) (domain.ChatInstall, error)
	UserInfo(ctx context.Context, token, user string) (domain.ChatUser, error)
	PostMessage(ctx context.Context, token, channel string, m domain.ChatMessage) (string, error)
	UpdateMessage(ctx context.Context, token, channel, ts string, m domain.ChatMessage) error
	PostEphemeral(ctx context.Context, token, channel, user, text string) error
	OpenView(ctx context.Context, token, triggerID string, m domain.ChatModal) error
	PublishHome(ctx context.Context, token, user string, sections []string) error
}

// Actions decides actions as a person, through the runs service's public actions API, so
// every rule of that API holds: approver group, quorum, self-approval, people only.
type Actions interface {
	Decide(ctx context.Context, as auth.Principal, team, actionID string, approved bool, comments string) error
}

// WorkflowParams reads the parameters of a workflow's latest version.
type WorkflowParams interface {
	Params(ctx context.Context, team, workflow string) ([]param.Param, error)
}

// Chat is the chat platform's app: installs, slash commands, events, interactivity, and
// what is posted back to channels.
type Chat struct {
	Store     ChatStore
	Platform  ChatPlatform
	Runs      Runs
	Workflows Workflows
	Params    WorkflowParams
	Settings  Settings
	People    People
	Actions   Actions
	// StateKey signs the install flow's states.
	StateKey []byte
	// PublicURL is Baton's address as browsers reach it; AuthorizeURL the platform's
	// OAuth authorize page.
	PublicURL    string
	AuthorizeURL string
	Now          func() time.Time
	Log          *slog.Logger

	mu     sync.Mutex
	actors map[string]cachedActor
}

type cachedActor struct {
	p  auth.Principal
	at time.Time
}

// Chat's tunables.
const (
	// actorTTL is how long a linked user's principal is kept: roles changed in Baton take
	// effect in chat within it.
	actorTTL = 3 * time.Second
	// maxActors bounds the principals kept.
	maxActors = 10000
	// runChannelTTL is how long a run started from chat is followed for its status.
	runChannelTTL = 30 * 24 * time.Hour
	// postedTTL is how long a posted event is remembered against redeliveries.
	postedTTL = 7 * 24 * time.Hour
	// InstallScopes are what the app asks for.
	InstallScopes = "commands,chat:write,users:read,users:read.email"
)

// chatStateLabel derives the chat install's state key (domain.StateKey).
const chatStateLabel = "chat install"

// ChatStateKey is the key of the chat install flow's states, from the service's key.
func ChatStateKey(secretKey []byte) []byte { return domain.StateKey(secretKey, chatStateLabel) }

// RedirectURI is where the platform sends the browser back after an install.
func (c *Chat) RedirectURI() string {
	return strings.TrimRight(c.PublicURL, "/") + "/api/v2/integration/chat/auth"
}

// InstallURL is the platform's authorize page for a new install, with a signed state;
// INTEGRATION_NOT_LINKED when no client id is configured.
func (c *Chat) InstallURL(ctx context.Context) (string, error) {
	st, err := c.Settings.IntegrationSettings(ctx)
	if err != nil {
		return "", err
	}
	if st.Chat.ClientID == "" {
		return "", apperr.New(apperr.IntegrationNotLinked, "The chat integration is not configured (no chat.clientId setting).")
	}
	q := url.Values{"client_id": {st.Chat.ClientID}, "scope": {InstallScopes}, "redirect_uri": {c.RedirectURI()},
		"state": {domain.SignState(c.StateKey, "chat", c.Now().Add(domain.InstallStateTTL))}}
	sep := "?"
	if strings.Contains(c.AuthorizeURL, "?") {
		sep = "&"
	}
	return c.AuthorizeURL + sep + q.Encode(), nil
}

// Authorize ends an install: it checks the state, exchanges code for the workspace's bot
// token and keeps the install.
func (c *Chat) Authorize(ctx context.Context, code, state string) (domain.ChatInstall, error) {
	if _, err := domain.VerifyState(c.StateKey, state, c.Now()); err != nil {
		return domain.ChatInstall{}, apperr.New(apperr.IntegrationInvalidSignature, "The install's state is not valid or has expired; install again.")
	}
	if code == "" {
		return domain.ChatInstall{}, apperr.New(apperr.QueryInvalidFilters, "The chat platform sent no code.")
	}
	st, err := c.Settings.IntegrationSettings(ctx)
	if err != nil {
		return domain.ChatInstall{}, err
	}
	if st.Chat.ClientID == "" || st.Chat.ClientSecret == "" {
		return domain.ChatInstall{}, apperr.New(apperr.IntegrationNotLinked, "The chat integration is not configured (chat.clientId, chat.clientSecret).")
	}
	in, err := c.Platform.OAuthAccess(ctx, st.Chat.ClientID, st.Chat.ClientSecret, code, c.RedirectURI())
	if errors.Is(err, domain.ErrChatRefused) {
		return domain.ChatInstall{}, apperr.Wrap(apperr.RequestInvalid, err, "The chat platform refused the install's code; install again.")
	}
	if err != nil {
		return domain.ChatInstall{}, err
	}
	in.InstalledAt = c.Now()
	if err := c.Store.SaveChatInstall(ctx, in); err != nil {
		return domain.ChatInstall{}, err
	}
	return in, nil
}

// Verify checks a chat request: signed with the signing secret over its raw body, recent,
// and not seen before. A replay is INTEGRATION_INVALID_SIGNATURE too: the signature is
// good for one request only.
func (c *Chat) Verify(ctx context.Context, timestamp, signature string, body []byte) error {
	st, err := c.Settings.IntegrationSettings(ctx)
	if err != nil {
		return err
	}
	if err := domain.VerifyChatRequest(st.Chat.SigningSecret, timestamp, signature, body, c.Now()); err != nil {
		return err
	}
	// Kept past the window's far edge: a request may be up to a window early.
	fresh, err := c.Store.FirstSignature(ctx, signature, c.Now().Add(2*domain.ChatSignatureWindow))
	if err != nil {
		return err
	}
	if !fresh {
		return apperr.New(apperr.IntegrationInvalidSignature, "The chat request was already received (a replay).")
	}
	return nil
}

// ChatRequest is who sent a slash command or an interaction, from where.
type ChatRequest struct {
	WorkspaceID string
	UserID      string
	ChannelID   string
	TriggerID   string
	Text        string
}

// ChatReply is the answer to a slash command: a message shown to everyone in the channel
// or to its sender only.
type ChatReply struct {
	Message   domain.ChatMessage
	InChannel bool
}

func ephemeral(text string) ChatReply { return ChatReply{Message: domain.ChatMessage{Text: text}} }

// refusal is what a chat user is told when err stops their command. Baton's own errors
// say what went wrong; others are not shown.
func (c *Chat) refusal(err error) ChatReply {
	if e, ok := apperr.As(err); ok {
		return ephemeral("⚠️ " + e.Message)
	}
	c.Log.Warn("chat command failed", "error", err)
	return ephemeral("⚠️ Something went wrong; try again.")
}

// Command runs a slash command. What the user did wrong, or may not do, is answered as a
// message to them alone; errors are what the platform should see fail.
func (c *Chat) Command(ctx context.Context, r ChatRequest) (ChatReply, error) {
	cmd, err := domain.ParseChatCommand(r.Text)
	if err != nil {
		return c.refusal(err), nil
	}
	if cmd.Verb == domain.VerbHelp {
		return ephemeral(domain.ChatHelp), nil
	}
	p, err := c.actor(ctx, r.WorkspaceID, r.UserID)
	if err != nil {
		return c.refusal(err), nil
	}
	var reply ChatReply
	switch cmd.Verb {
	case domain.VerbRun:
		reply, err = c.run(ctx, p, r, cmd)
	case domain.VerbList:
		reply, err = c.list(ctx, p, cmd.Team)
	case domain.VerbNotify:
		reply, err = c.notify(ctx, p, r, cmd)
	}
	if err != nil {
		return c.refusal(err), nil
	}
	return reply, nil
}

// actor is the Baton user a chat user acts as: linked on first use by the email the
// platform knows, and read again (at most actorTTL old) so roles are current.
func (c *Chat) actor(ctx context.Context, workspace, user string) (auth.Principal, error) {
	key := workspace + "/" + user
	c.mu.Lock()
	if a, ok := c.actors[key]; ok && c.Now().Sub(a.at) < actorTTL {
		c.mu.Unlock()
		return a.p, nil
	}
	c.mu.Unlock()
	link, err := c.Store.FindChatLink(ctx, workspace, user)
	if errors.Is(err, domain.ErrChatNotFound) {
		link, err = c.link(ctx, workspace, user)
	}
	if err != nil {
		return auth.Principal{}, err
	}
	p, err := c.People.ByEmail(ctx, link.Email)
	if apperr.HasReason(err, apperr.UserNotFound) || apperr.HasReason(err, apperr.Unauthenticated) {
		return auth.Principal{}, apperr.Wrap(apperr.IntegrationNotLinked, err, "No active Baton user has your chat email (%s): ask an admin to add you.", link.Email)
	}
	if err != nil {
		return auth.Principal{}, err
	}
	if p.ID != link.UserID {
		// The email now belongs to someone else in Baton (a user deleted, another made).
		link.UserID, link.LinkedAt = p.ID, c.Now()
		if err := c.Store.SaveChatLink(ctx, link); err != nil {
			return auth.Principal{}, err
		}
	}
	c.mu.Lock()
	if c.actors == nil || len(c.actors) >= maxActors {
		c.actors = map[string]cachedActor{}
	}
	c.actors[key] = cachedActor{p: p, at: c.Now()}
	c.mu.Unlock()
	return p, nil
}

// link looks a chat user up on the platform and links them to the Baton user of their email.
func (c *Chat) link(ctx context.Context, workspace, user string) (domain.ChatLink, error) {
	token, err := c.botToken(ctx, workspace)
	if err != nil {
		return domain.ChatLink{}, err
	}
	u, err := c.Platform.UserInfo(ctx, token, user)
	if errors.Is(err, domain.ErrChatRefused) {
		return domain.ChatLink{}, apperr.Wrap(apperr.IntegrationNotLinked, err, "Baton cannot read your chat profile to link you to a Baton user.")
	}
	if err != nil {
		return domain.ChatLink{}, err
	}
	if u.Email == "" || u.Deleted {
		return domain.ChatLink{}, apperr.New(apperr.IntegrationNotLinked, "Your chat profile shows no email, so Baton cannot link you to a Baton user.")
	}
	p, err := c.People.ByEmail(ctx, u.Email)
	if apperr.HasReason(err, apperr.UserNotFound) || apperr.HasReason(err, apperr.Unauthenticated) {
		return domain.ChatLink{}, apperr.Wrap(apperr.IntegrationNotLinked, err, "No active Baton user has your chat email (%s): ask an admin to add you.", u.Email)
	}
	if err != nil {
		return domain.ChatLink{}, err
	}
	l := domain.ChatLink{WorkspaceID: workspace, ChatUserID: user, UserID: p.ID, Email: u.Email, LinkedAt: c.Now()}
	if err := c.Store.SaveChatLink(ctx, l); err != nil {
		return domain.ChatLink{}, err
	}
	return l, nil
}

// botToken is the workspace's bot token: its install's, else the chat.botToken setting (a
// single-workspace app configured by hand).
func (c *Chat) botToken(ctx context.Context, workspace string) (string, error) {
	in, err := c.Store.FindChatInstall(ctx, workspace)
	if err == nil {
		return in.BotToken, nil
	}
	if !errors.Is(err, domain.ErrChatNotFound) {
		return "", err
	}
	st, err := c.Settings.IntegrationSettings(ctx)
	if err != nil {
		return "", err
	}
	if st.Chat.BotToken == "" {
		return "", apperr.New(apperr.IntegrationNotLinked, "The chat app is not installed in this workspace.")
	}
	return st.Chat.BotToken, nil
}

// runMeta is the run modal's metadata: the workflow it runs, and the channel to answer in.
type runMeta struct {
	Team     string `json:"team"`
	Workflow string `json:"workflow"`
	Channel  string `json:"channel"`
}

func (c *Chat) run(ctx context.Context, p auth.Principal, r ChatRequest, cmd domain.ChatCommand) (ChatReply, error) {
	if !p.Can(auth.Scope{Team: cmd.Team, Workflow: cmd.Workflow}, "workflowrun", "write") {
		return ChatReply{}, apperr.New(apperr.PermissionDenied, "You may not run workflows of team '%s'.", cmd.Team)
	}
	params, err := c.Params.Params(ctx, cmd.Team, cmd.Workflow)
	if err != nil {
		return ChatReply{}, err
	}
	if missing := missingParams(params, cmd.Params); len(missing) > 0 {
		if r.TriggerID == "" {
			return ChatReply{}, apperr.New(apperr.RequestInvalid, "Give the required parameters: %s.", strings.Join(missing, ", "))
		}
		if err := c.openRunModal(ctx, r, cmd, params); err != nil {
			return ChatReply{}, err
		}
		return ephemeral(fmt.Sprintf("The workflow needs %s: fill in the form.", strings.Join(missing, ", "))), nil
	}
	id, err := c.submit(ctx, p, r, cmd.Team, cmd.Workflow, cmd.Params)
	if err != nil {
		return ChatReply{}, err
	}
	return ChatReply{InChannel: true, Message: domain.ChatMessage{Text: c.startedText(p, cmd.Team, cmd.Workflow, id)}}, nil
}

func (c *Chat) startedText(p auth.Principal, team, workflow, id string) string {
	s := fmt.Sprintf("▶️ %s started *%s/%s*: run `%s`", cmp.Or(p.Name, p.Email), team, workflow, id)
	if link := c.runLink(team, id); link != "" {
		s += " — " + link
	}
	return s
}

// runLink is where a run is read, or "" when Baton's public address is not configured.
func (c *Chat) runLink(team, id string) string {
	if c.PublicURL == "" {
		return ""
	}
	return strings.TrimRight(c.PublicURL, "/") + "/api/v2/team/" + url.PathEscape(team) + "/workflowrun/" + url.PathEscape(id)
}

// missingParams lists the required parameters with neither a value given nor a default.
func missingParams(params []param.Param, given map[string]string) []string {
	var out []string
	for _, p := range params {
		if _, ok := given[p.Name]; ok || !p.Required || (len(p.Default) > 0 && string(p.Default) != "null" && string(p.Default) != `""`) {
			continue
		}
		out = append(out, p.Name)
	}
	return out
}

func (c *Chat) openRunModal(ctx context.Context, r ChatRequest, cmd domain.ChatCommand, params []param.Param) error {
	meta, err := json.Marshal(runMeta{Team: cmd.Team, Workflow: cmd.Workflow, Channel: r.ChannelID})
	if err != nil {
		return err
	}
	m := domain.ChatModal{CallbackID: domain.RunModalID, Title: "Run " + cmd.Workflow, Submit: "Run", Metadata: string(meta)}
	for _, p := range params {
		if p.ReadOnly {
			continue
		}
		initial := cmd.Params[p.Name]
		if initial == "" && len(p.Default) > 0 {
			var s string
			if json.Unmarshal(p.Default, &s) == nil {
				initial = s
			}
		}
		m.Inputs = append(m.Inputs, domain.ChatInput{Name: p.Name, Label: cmp.Or(p.Label, p.Name), Initial: initial, Optional: !p.Required})
	}
	token, err := c.botToken(ctx, r.WorkspaceID)
	if err != nil {
		return err
	}
	return c.Platform.OpenView(ctx, token, r.TriggerID, m)
}

// submit starts a run with trigger chat as p, and follows it to post its status back to
// the channel.
func (c *Chat) submit(ctx context.Context, p auth.Principal, r ChatRequest, team, workflow string, values map[string]string) (string, error) {
	params := make(map[string]any, len(values))
	for k, v := range values {
		params[k] = v
	}
	ch := domain.ChatChannel{WorkspaceID: r.WorkspaceID, ChannelID: r.ChannelID}
	// The platform gives every command and submission its own trigger id; a request
	// without one is its own run.
	key := "chat:" + r.WorkspaceID + ":" + r.TriggerID
	if r.TriggerID == "" {
		key = fmt.Sprintf("chat:%s:%s@%d", r.WorkspaceID, r.UserID, c.Now().UnixNano())
	}
	req := runsapi.SubmitRun{Params: params, Trigger: "chat", IdempotencyKey: key,
		Labels:      map[string]string{domain.ChatChannelLabel: ch.String()},
		InitiatedBy: runsapi.Initiator{Type: p.Type, ID: p.ID, Name: cmp.Or(p.Name, p.Email), Person: cmp.Or(p.Person, p.ID)}}
	run, err := c.Runs.Submit(ctx, team, workflow, req)
	if err != nil {
		return "", err
	}
	if err := c.Store.SaveRunChannel(ctx, run.ID, ch, c.Now().Add(runChannelTTL)); err != nil {
		// The run is made, and its label names the channel: its status events save it.
		c.Log.Warn("cannot remember a chat run's channel", "run", run.ID, "error", err)
	}
	return run.ID, nil
}

func (c *Chat) list(ctx context.Context, p auth.Principal, team string) (ChatReply, error) {
	if !p.Can(auth.Scope{Team: team}, "workflow", "read") {
		return ChatReply{}, apperr.New(apperr.PermissionDenied, "You may not read team '%s'.", team)
	}
	tw, err := c.Workflows.Triggers(ctx, team, "manual", "")
	if err != nil {
		return ChatReply{}, err
	}
	var lines []string
	for _, w := range tw.Workflows {
		if w.Status != "active" || !p.Can(auth.Scope{Team: team, Workflow: w.Name}, "workflowrun", "write") {
			continue
		}
		lines = append(lines, "• `"+team+"/"+w.Name+"`")
	}
	if len(lines) == 0 {
		return ephemeral(fmt.Sprintf("Team *%s* has no workflow you can run from chat.", team)), nil
	}
	return ephemeral(fmt.Sprintf("Workflows of *%s* you can run:\n%s", team, strings.Join(lines, "\n"))), nil
}

func (c *Chat) notify(ctx context.Context, p auth.Principal, r ChatRequest, cmd domain.ChatCommand) (ChatReply, error) {
	if !slices.Contains(p.Roles, auth.RoleAdmin) && p.Teams[cmd.Team] != auth.RoleOwner {
		return ChatReply{}, apperr.New(apperr.PermissionDenied, "Only an owner of team '%s' or an admin chooses its channel.", cmd.Team)
	}
	if cmd.Off {
		if err := c.Store.SetTeamChannel(ctx, cmd.Team, nil); err != nil {
			return ChatReply{}, err
		}
		return ChatReply{InChannel: true, Message: domain.ChatMessage{Text: fmt.Sprintf("Approvals of team *%s* are no longer posted here.", cmd.Team)}}, nil
	}
	if err := c.Store.SetTeamChannel(ctx, cmd.Team, &domain.ChatChannel{WorkspaceID: r.WorkspaceID, ChannelID: r.ChannelID}); err != nil {
		return ChatReply{}, err
	}
	return ChatReply{InChannel: true, Message: domain.ChatMessage{Text: fmt.Sprintf("Approvals of team *%s* will be posted here.", cmd.Team)}}, nil
}

// Integration is the chat platform's entry of GET /integration for team: linked once the
// app can post (installed in a workspace, or a bot token in the settings), its ref the
// channel the team's approvals go to (`/baton notify`), and for a caller who may install
// it (mayLink) the install link, when the app's client id and the public URL are set.
func (c *Chat) Integration(ctx context.Context, team string, mayLink bool) (Integration, error) {
	st, err := c.Settings.IntegrationSettings(ctx)
	if err != nil {
		return Integration{}, err
	}
	in := Integration{ID: "chat", Name: "Chat", Icon: chatIcon, Status: StatusUnlinked,
		Description: "Runs workflows from slash commands, posts run status to channels and asks for approvals there.",
		Instructions: "Install the chat app, then type `/baton help` in a channel; `/baton notify " + team +
			"` there posts the team's approvals to it."}
	installed := st.Chat.BotToken != ""
	if !installed {
		if installed, err = c.Store.AnyChatInstall(ctx); err != nil {
			return Integration{}, err
		}
	}
	if installed {
		in.Status = StatusLinked
	}
	switch ch, err := c.Store.FindTeamChannel(ctx, team); {
	case err == nil:
		in.Ref = ch.String()
	case !errors.Is(err, domain.ErrChatNotFound):
		return Integration{}, err
	}
	if mayLink && st.Chat.ClientID != "" && c.PublicURL != "" {
		in.Link = strings.TrimRight(c.PublicURL, "/") + "/api/v2/integration/chat/install"
	}
	return in, nil
}
