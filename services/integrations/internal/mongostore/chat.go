// Package mongostore keeps the integrations service's records in MongoDB.
package mongostore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/integrations/internal/app"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

// The chat app's records. Every read is by _id: the embedded FerretDB answers other
// filters by reading the whole collection. Records that expire carry expiresAt, which a
// TTL index removes on MongoDB and Sweep everywhere (FerretDB has no TTL indexes).

// Chat collections.
const (
	chatSignatures     = "chat_signatures"
	chatInstalls       = "chat_installs"
	chatLinks          = "chat_links"
	chatRunChannels    = "chat_run_channels"
	chatTeamChannels   = "chat_team_channels"
	chatPosted         = "chat_posted"
	chatActionMessages = "chat_action_messages"
)

// chatExpiring are the collections whose documents carry expiresAt.
var chatExpiring = []string{chatSignatures, chatRunChannels, chatPosted, chatActionMessages}

// ChatStore is app.ChatStore on MongoDB; bot tokens are sealed with its box.
type ChatStore struct {
	db  *mongo.Database
	box *secrets.Box
}

var _ app.ChatStore = (*ChatStore)(nil)

// NewChatStore returns the chat app's store in db.
func NewChatStore(db *mongo.Database, box *secrets.Box) *ChatStore {
	return &ChatStore{db: db, box: box}
}

// EnsureIndexes makes the TTL indexes of the chatExpiring records where the server has them.
func (s *ChatStore) EnsureIndexes(ctx context.Context) error {
	for _, name := range chatExpiring {
		err := mongox.EnsureIndexes(ctx, s.db.Collection(name), mongo.IndexModel{
			Keys: bson.D{{Key: "expiresAt", Value: 1}}, Options: options.Index().SetExpireAfterSeconds(0)})
		if err != nil && !strings.Contains(err.Error(), "not implemented") {
			return err
		}
	}
	return nil
}

// Sweep removes the records expired by now.
func (s *ChatStore) Sweep(ctx context.Context, now time.Time) error {
	for _, name := range chatExpiring {
		if _, err := s.db.Collection(name).DeleteMany(ctx, bson.M{"expiresAt": bson.M{"$lt": now}}); err != nil {
			return fmt.Errorf("sweep %s: %w", name, err)
		}
	}
	return nil
}

// FirstSignature implements app.ChatStore: the signature is the _id, so two replicas
// seeing one request at once both insert and one fails.
func (s *ChatStore) FirstSignature(ctx context.Context, signature string, until time.Time) (bool, error) {
	_, err := s.db.Collection(chatSignatures).InsertOne(ctx, bson.M{"_id": signature, "expiresAt": until})
	if mongox.IsDuplicateKey(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("record a chat signature: %w", err)
	}
	return true, nil
}

type chatInstallDoc struct {
	ID          string    `bson:"_id"`
	Name        string    `bson:"name"`
	BotUserID   string    `bson:"botUserId"`
	BotToken    string    `bson:"botToken"`
	Scope       string    `bson:"scope"`
	InstalledAt time.Time `bson:"installedAt"`
}

// SaveChatInstall implements app.ChatStore, sealing the bot token.
func (s *ChatStore) SaveChatInstall(ctx context.Context, in domain.ChatInstall) error {
	sealed, err := s.box.Seal(in.BotToken)
	if err != nil {
		return fmt.Errorf("seal a bot token: %w", err)
	}
	doc := chatInstallDoc{ID: in.WorkspaceID, Name: in.WorkspaceName, BotUserID: in.BotUserID, BotToken: sealed, Scope: in.Scope, InstalledAt: in.InstalledAt}
	return s.replace(ctx, chatInstalls, doc.ID, doc)
}

// AnyChatInstall implements app.ChatStore. Installs are a workspace each: few.
func (s *ChatStore) AnyChatInstall(ctx context.Context) (bool, error) {
	n, err := s.db.Collection(chatInstalls).CountDocuments(ctx, bson.M{}, options.Count().SetLimit(1))
	if err != nil {
		return false, fmt.Errorf("look for chat installs: %w", err)
	}
	return n > 0, nil
}

// FindChatInstall implements app.ChatStore, opening the bot token.
func (s *ChatStore) FindChatInstall(ctx context.Context, workspace string) (domain.ChatInstall, error) {
	d, err := findChat[chatInstallDoc](ctx, s.db.Collection(chatInstalls), workspace)
	if err != nil {
		return domain.ChatInstall{}, err
	}
	token, err := s.box.Open(d.BotToken)
	if err != nil {
		return domain.ChatInstall{}, fmt.Errorf("open the bot token of workspace %s: %w", workspace, err)
	}
	return domain.ChatInstall{WorkspaceID: d.ID, WorkspaceName: d.Name, BotUserID: d.BotUserID, BotToken: token, Scope: d.Scope, InstalledAt: d.InstalledAt}, nil
}

type chatLinkDoc struct {
	ID        string    `bson:"_id"`
	Workspace string    `bson:"workspace"`
	ChatUser  string    `bson:"chatUser"`
	UserID    string    `bson:"userId"`
	Email     string    `bson:"email"`
	LinkedAt  time.Time `bson:"linkedAt"`
}

func chatLinkID(workspace, user string) string { return workspace + "/" + user }

// SaveChatLink implements app.ChatStore.
func (s *ChatStore) SaveChatLink(ctx context.Context, l domain.ChatLink) error {
	doc := chatLinkDoc{ID: chatLinkID(l.WorkspaceID, l.ChatUserID), Workspace: l.WorkspaceID, ChatUser: l.ChatUserID, UserID: l.UserID, Email: l.Email, LinkedAt: l.LinkedAt}
	return s.replace(ctx, chatLinks, doc.ID, doc)
}

// FindChatLink implements app.ChatStore.
func (s *ChatStore) FindChatLink(ctx context.Context, workspace, user string) (domain.ChatLink, error) {
	d, err := findChat[chatLinkDoc](ctx, s.db.Collection(chatLinks), chatLinkID(workspace, user))
	if err != nil {
		return domain.ChatLink{}, err
	}
	return domain.ChatLink{WorkspaceID: d.Workspace, ChatUserID: d.ChatUser, UserID: d.UserID, Email: d.Email, LinkedAt: d.LinkedAt}, nil
}

type chatChannelDoc struct {
	ID        string     `bson:"_id"`
	Workspace string     `bson:"workspace"`
	Channel   string     `bson:"channel"`
	ExpiresAt *time.Time `bson:"expiresAt,omitempty"`
}

// SaveRunChannel implements app.ChatStore.
func (s *ChatStore) SaveRunChannel(ctx context.Context, runID string, ch domain.ChatChannel, until time.Time) error {
	return s.replace(ctx, chatRunChannels, runID, chatChannelDoc{ID: runID, Workspace: ch.WorkspaceID, Channel: ch.ChannelID, ExpiresAt: &until})
}

// FindRunChannel implements app.ChatStore.
func (s *ChatStore) FindRunChannel(ctx context.Context, runID string) (domain.ChatChannel, error) {
	d, err := findChat[chatChannelDoc](ctx, s.db.Collection(chatRunChannels), runID)
	if err != nil {
		return domain.ChatChannel{}, err
	}
	return domain.ChatChannel{WorkspaceID: d.Workspace, ChannelID: d.Channel}, nil
}

// SetTeamChannel implements app.ChatStore.
func (s *ChatStore) SetTeamChannel(ctx context.Context, team string, ch *domain.ChatChannel) error {
	if ch == nil {
		if _, err := s.db.Collection(chatTeamChannels).DeleteOne(ctx, bson.M{"_id": team}); err != nil {
			return fmt.Errorf("remove team %s's chat channel: %w", team, err)
		}
		return nil
	}
	return s.replace(ctx, chatTeamChannels, team, chatChannelDoc{ID: team, Workspace: ch.WorkspaceID, Channel: ch.ChannelID})
}

// FindTeamChannel implements app.ChatStore.
func (s *ChatStore) FindTeamChannel(ctx context.Context, team string) (domain.ChatChannel, error) {
	d, err := findChat[chatChannelDoc](ctx, s.db.Collection(chatTeamChannels), team)
	if err != nil {
		return domain.ChatChannel{}, err
	}
	return domain.ChatChannel{WorkspaceID: d.Workspace, ChannelID: d.Channel}, nil
}

// Posted implements app.ChatStore.
func (s *ChatStore) Posted(ctx context.Context, key string) (bool, error) {
	_, err := findChat[bson.M](ctx, s.db.Collection(chatPosted), key)
	if errors.Is(err, domain.ErrChatNotFound) {
		return false, nil
	}
	return err == nil, err
}

// MarkPosted implements app.ChatStore.
func (s *ChatStore) MarkPosted(ctx context.Context, key string, until time.Time) error {
	return s.replace(ctx, chatPosted, key, bson.M{"_id": key, "expiresAt": until})
}

type chatActionMessagesDoc struct {
	ID        string           `bson:"_id"`
	Messages  []chatMessageDoc `bson:"messages"`
	ExpiresAt time.Time        `bson:"expiresAt"`
}

type chatMessageDoc struct {
	Workspace string `bson:"workspace"`
	Channel   string `bson:"channel"`
	TS        string `bson:"ts"`
	Text      string `bson:"text"`
	Quorum    int    `bson:"quorum,omitempty"`
	Votes     int    `bson:"votes,omitempty"`
	Closed    bool   `bson:"closed,omitempty"`
}

// chatActionMessagesTTL is how long an action's messages are kept for updates.
const chatActionMessagesTTL = 30 * 24 * time.Hour

// SaveActionMessage implements app.ChatStore: one document per action holds its messages,
// one per channel, so they are read by _id.
func (s *ChatStore) SaveActionMessage(ctx context.Context, m app.ActionMessage) error {
	coll := s.db.Collection(chatActionMessages)
	d, err := findChat[chatActionMessagesDoc](ctx, coll, m.ActionID)
	if err != nil && !errors.Is(err, domain.ErrChatNotFound) {
		return err
	}
	d.ID, d.ExpiresAt = m.ActionID, time.Now().Add(chatActionMessagesTTL)
	md := chatMessageDoc{Workspace: m.Channel.WorkspaceID, Channel: m.Channel.ChannelID, TS: m.TS, Text: m.Text, Quorum: m.Quorum, Votes: m.Votes, Closed: m.Closed}
	replaced := false
	for i, x := range d.Messages {
		if x.Workspace == md.Workspace && x.Channel == md.Channel {
			d.Messages[i], replaced = md, true
		}
	}
	if !replaced {
		d.Messages = append(d.Messages, md)
	}
	return s.replace(ctx, chatActionMessages, d.ID, d)
}

// FindActionMessages implements app.ChatStore.
func (s *ChatStore) FindActionMessages(ctx context.Context, actionID string) ([]app.ActionMessage, error) {
	d, err := findChat[chatActionMessagesDoc](ctx, s.db.Collection(chatActionMessages), actionID)
	if errors.Is(err, domain.ErrChatNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]app.ActionMessage, len(d.Messages))
	for i, m := range d.Messages {
		out[i] = app.ActionMessage{ActionID: actionID, Channel: domain.ChatChannel{WorkspaceID: m.Workspace, ChannelID: m.Channel}, TS: m.TS, Text: m.Text,
			Quorum: m.Quorum, Votes: m.Votes, Closed: m.Closed}
	}
	return out, nil
}

// replace writes doc as the document id of collection name.
func (s *ChatStore) replace(ctx context.Context, name, id string, doc any) error {
	_, err := s.db.Collection(name).ReplaceOne(ctx, bson.M{"_id": id}, doc, options.Replace().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("write %s %s: %w", name, id, err)
	}
	return nil
}

// findChat reads document id of coll; domain.ErrChatNotFound when there is none.
func findChat[T any](ctx context.Context, coll *mongo.Collection, id string) (T, error) {
	v, err := mongox.FindOne[T](ctx, coll, bson.M{"_id": id})
	if errors.Is(err, mongox.ErrNotFound) {
		return v, fmt.Errorf("%s %s: %w", coll.Name(), id, domain.ErrChatNotFound)
	}
	return v, err
}
