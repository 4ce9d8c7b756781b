package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/integrations/internal/app"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

// Chat is app.ChatStore in the file: every record is read by its primary key; those that
// expire are removed by Sweep, by their expires index.
type Chat struct {
	db  *sqlitex.DB
	box secrets.Sealer
}

var _ app.ChatStore = (*Chat)(nil)

// chatActionMessagesTTL is how long an action's messages are kept for updates, from the
// last one saved.
const chatActionMessagesTTL = 30 * 24 * time.Hour

// The chat app's statements; those of its paths are checked by index in plan_test.go.
const (
	qFirstSignature = `INSERT INTO chat_signatures (signature, expires) VALUES (?, ?) ON CONFLICT (signature) DO NOTHING`
	qSaveInstall    = `INSERT INTO chat_installs (workspace, doc) VALUES (?, ?) ON CONFLICT (workspace) DO UPDATE SET doc = excluded.doc`
	qAnyInstall     = `SELECT 1 FROM chat_installs LIMIT 1`
	qFindInstall    = `SELECT doc FROM chat_installs WHERE workspace = ?`
	qSaveLink       = `INSERT INTO chat_links (workspace, chat_user, doc) VALUES (?, ?, ?)
		ON CONFLICT (workspace, chat_user) DO UPDATE SET doc = excluded.doc`
	qFindLink       = `SELECT doc FROM chat_links WHERE workspace = ? AND chat_user = ?`
	qSaveRunChannel = `INSERT INTO chat_run_channels (run, workspace, channel, expires) VALUES (?, ?, ?, ?)
		ON CONFLICT (run) DO UPDATE SET workspace = excluded.workspace, channel = excluded.channel, expires = excluded.expires`
	qFindRunChannel = `SELECT workspace, channel FROM chat_run_channels WHERE run = ?`
	qSetTeamChannel = `INSERT INTO chat_team_channels (team, workspace, channel) VALUES (?, ?, ?)
		ON CONFLICT (team) DO UPDATE SET workspace = excluded.workspace, channel = excluded.channel`
	qDropTeamChannel = `DELETE FROM chat_team_channels WHERE team = ?`
	qFindTeamChannel = `SELECT workspace, channel FROM chat_team_channels WHERE team = ?`
	qPosted          = `SELECT 1 FROM chat_posted WHERE key = ?`
	qMarkPosted      = `INSERT INTO chat_posted (key, expires) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET expires = excluded.expires`
	qSaveMessage     = `INSERT INTO chat_action_messages (action, workspace, channel, expires, doc) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (action, workspace, channel) DO UPDATE SET expires = excluded.expires, doc = excluded.doc`
	// qKeepMessages keeps an action's other messages as long as the one saved.
	qKeepMessages = `UPDATE chat_action_messages SET expires = ? WHERE action = ?`
	qFindMessages = `SELECT workspace, channel, doc FROM chat_action_messages WHERE action = ?`
)

// chatExpiring are the tables whose rows expire.
var chatExpiring = []string{"chat_signatures", "chat_run_channels", "chat_posted", "chat_action_messages"}

// sweepQuery deletes the rows of table expired by a time.
func sweepQuery(table string) string { return `DELETE FROM ` + table + ` WHERE expires < ?` }

// Sweep removes the records expired by now.
func (s *Chat) Sweep(ctx context.Context, now time.Time) error {
	err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		for _, table := range chatExpiring {
			if _, err := tx.Exec(sweepQuery(table), ms(now)); err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sweep the chat records: %w", err)
	}
	return nil
}

// FirstSignature implements app.ChatStore: the signature is the primary key, so of two
// requests seen at once one inserts it.
func (s *Chat) FirstSignature(ctx context.Context, signature string, until time.Time) (bool, error) {
	n, err := execOn(ctx, s.db, qFirstSignature, signature, ms(until))
	if err != nil {
		return false, fmt.Errorf("record a chat signature: %w", err)
	}
	return n == 1, nil
}

// chatInstallDoc is an install's doc, its bot token sealed.
type chatInstallDoc struct {
	Name        string `json:"name,omitempty"`
	BotUserID   string `json:"botUserId,omitempty"`
	BotToken    string `json:"botToken"`
	Scope       string `json:"scope,omitempty"`
	InstalledAt int64  `json:"installedAt,omitempty"`
}

// SaveChatInstall implements app.ChatStore, sealing the bot token.
func (s *Chat) SaveChatInstall(ctx context.Context, in domain.ChatInstall) error {
	sealed, err := s.box.Seal(in.BotToken)
	if err != nil {
		return fmt.Errorf("seal a bot token: %w", err)
	}
	doc, err := json.Marshal(chatInstallDoc{Name: in.WorkspaceName, BotUserID: in.BotUserID, BotToken: sealed, Scope: in.Scope, InstalledAt: ms(in.InstalledAt)})
	if err != nil {
		return fmt.Errorf("encode the chat install of %s: %w", in.WorkspaceID, err)
	}
	if _, err := execOn(ctx, s.db, qSaveInstall, in.WorkspaceID, doc); err != nil {
		return fmt.Errorf("write the chat install of %s: %w", in.WorkspaceID, err)
	}
	return nil
}

// AnyChatInstall implements app.ChatStore.
func (s *Chat) AnyChatInstall(ctx context.Context) (bool, error) {
	var one int
	err := s.db.QueryRow(ctx, qAnyInstall).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look for chat installs: %w", err)
	}
	return true, nil
}

// FindChatInstall implements app.ChatStore, opening the bot token.
func (s *Chat) FindChatInstall(ctx context.Context, workspace string) (domain.ChatInstall, error) {
	var d chatInstallDoc
	if err := s.findDoc(ctx, &d, "chat install "+workspace, qFindInstall, workspace); err != nil {
		return domain.ChatInstall{}, err
	}
	token, err := s.box.Open(d.BotToken)
	if err != nil {
		return domain.ChatInstall{}, fmt.Errorf("open the bot token of workspace %s: %w", workspace, err)
	}
	return domain.ChatInstall{WorkspaceID: workspace, WorkspaceName: d.Name, BotUserID: d.BotUserID, BotToken: token, Scope: d.Scope,
		InstalledAt: fromMS(d.InstalledAt)}, nil
}

// chatLinkDoc is a link's doc.
type chatLinkDoc struct {
	UserID   string `json:"userId"`
	Email    string `json:"email,omitempty"`
	LinkedAt int64  `json:"linkedAt,omitempty"`
}

// SaveChatLink implements app.ChatStore.
func (s *Chat) SaveChatLink(ctx context.Context, l domain.ChatLink) error {
	doc, err := json.Marshal(chatLinkDoc{UserID: l.UserID, Email: l.Email, LinkedAt: ms(l.LinkedAt)})
	if err != nil {
		return fmt.Errorf("encode the chat link of %s/%s: %w", l.WorkspaceID, l.ChatUserID, err)
	}
	if _, err := execOn(ctx, s.db, qSaveLink, l.WorkspaceID, l.ChatUserID, doc); err != nil {
		return fmt.Errorf("write the chat link of %s/%s: %w", l.WorkspaceID, l.ChatUserID, err)
	}
	return nil
}

// FindChatLink implements app.ChatStore.
func (s *Chat) FindChatLink(ctx context.Context, workspace, user string) (domain.ChatLink, error) {
	var d chatLinkDoc
	if err := s.findDoc(ctx, &d, "chat link "+workspace+"/"+user, qFindLink, workspace, user); err != nil {
		return domain.ChatLink{}, err
	}
	return domain.ChatLink{WorkspaceID: workspace, ChatUserID: user, UserID: d.UserID, Email: d.Email, LinkedAt: fromMS(d.LinkedAt)}, nil
}

// findDoc decodes into v the doc query answers; domain.ErrChatNotFound when none.
func (s *Chat) findDoc(ctx context.Context, v any, what, query string, args ...any) error {
	var doc []byte
	err := s.db.QueryRow(ctx, query, args...).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, domain.ErrChatNotFound)
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", what, err)
	}
	if err := json.Unmarshal(doc, v); err != nil {
		return fmt.Errorf("decode %s: %w", what, err)
	}
	return nil
}

// SaveRunChannel implements app.ChatStore.
func (s *Chat) SaveRunChannel(ctx context.Context, runID string, ch domain.ChatChannel, until time.Time) error {
	if _, err := execOn(ctx, s.db, qSaveRunChannel, runID, ch.WorkspaceID, ch.ChannelID, ms(until)); err != nil {
		return fmt.Errorf("write the chat channel of run %s: %w", runID, err)
	}
	return nil
}

// FindRunChannel implements app.ChatStore.
func (s *Chat) FindRunChannel(ctx context.Context, runID string) (domain.ChatChannel, error) {
	return s.findChannel(ctx, "chat channel of run "+runID, qFindRunChannel, runID)
}

// SetTeamChannel implements app.ChatStore.
func (s *Chat) SetTeamChannel(ctx context.Context, team string, ch *domain.ChatChannel) error {
	var err error
	if ch == nil {
		_, err = execOn(ctx, s.db, qDropTeamChannel, team)
	} else {
		_, err = execOn(ctx, s.db, qSetTeamChannel, team, ch.WorkspaceID, ch.ChannelID)
	}
	if err != nil {
		return fmt.Errorf("write team %s's chat channel: %w", team, err)
	}
	return nil
}

// FindTeamChannel implements app.ChatStore.
func (s *Chat) FindTeamChannel(ctx context.Context, team string) (domain.ChatChannel, error) {
	return s.findChannel(ctx, "chat channel of team "+team, qFindTeamChannel, team)
}

func (s *Chat) findChannel(ctx context.Context, what, query string, key string) (domain.ChatChannel, error) {
	var ch domain.ChatChannel
	err := s.db.QueryRow(ctx, query, key).Scan(&ch.WorkspaceID, &ch.ChannelID)
	if errors.Is(err, sql.ErrNoRows) {
		return domain.ChatChannel{}, fmt.Errorf("%s: %w", what, domain.ErrChatNotFound)
	}
	if err != nil {
		return domain.ChatChannel{}, fmt.Errorf("read the %s: %w", what, err)
	}
	return ch, nil
}

// Posted implements app.ChatStore.
func (s *Chat) Posted(ctx context.Context, key string) (bool, error) {
	var one int
	err := s.db.QueryRow(ctx, qPosted, key).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read chat message %s: %w", key, err)
	}
	return true, nil
}

// MarkPosted implements app.ChatStore.
func (s *Chat) MarkPosted(ctx context.Context, key string, until time.Time) error {
	if _, err := execOn(ctx, s.db, qMarkPosted, key, ms(until)); err != nil {
		return fmt.Errorf("mark chat message %s posted: %w", key, err)
	}
	return nil
}

// chatMessageDoc is an action message's doc.
type chatMessageDoc struct {
	TS     string `json:"ts"`
	Text   string `json:"text"`
	Quorum int    `json:"quorum,omitempty"`
	Votes  int    `json:"votes,omitempty"`
	Closed bool   `json:"closed,omitempty"`
}

// SaveActionMessage implements app.ChatStore: a row per action and channel, all the
// action's kept as long as the last saved.
func (s *Chat) SaveActionMessage(ctx context.Context, m app.ActionMessage) error {
	doc, err := json.Marshal(chatMessageDoc{TS: m.TS, Text: m.Text, Quorum: m.Quorum, Votes: m.Votes, Closed: m.Closed})
	if err != nil {
		return fmt.Errorf("encode a message of action %s: %w", m.ActionID, err)
	}
	until := ms(time.Now().Add(chatActionMessagesTTL))
	err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		if _, err := tx.Exec(qSaveMessage, m.ActionID, m.Channel.WorkspaceID, m.Channel.ChannelID, until, doc); err != nil {
			return err
		}
		_, err := tx.Exec(qKeepMessages, until, m.ActionID)
		return err
	})
	if err != nil {
		return fmt.Errorf("write a message of action %s: %w", m.ActionID, err)
	}
	return nil
}

// FindActionMessages implements app.ChatStore.
func (s *Chat) FindActionMessages(ctx context.Context, actionID string) ([]app.ActionMessage, error) {
	rows, err := s.db.Query(ctx, qFindMessages, actionID)
	if err != nil {
		return nil, fmt.Errorf("read the messages of action %s: %w", actionID, err)
	}
	defer rows.Close()
	var out []app.ActionMessage
	for rows.Next() {
		m := app.ActionMessage{ActionID: actionID}
		var doc []byte
		if err := rows.Scan(&m.Channel.WorkspaceID, &m.Channel.ChannelID, &doc); err != nil {
			return nil, fmt.Errorf("read the messages of action %s: %w", actionID, err)
		}
		var d chatMessageDoc
		if err := json.Unmarshal(doc, &d); err != nil {
			return nil, fmt.Errorf("decode a message of action %s: %w", actionID, err)
		}
		m.TS, m.Text, m.Quorum, m.Votes, m.Closed = d.TS, d.Text, d.Quorum, d.Votes, d.Closed
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the messages of action %s: %w", actionID, err)
	}
	return out, nil
}
