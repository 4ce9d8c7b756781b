package storetest

import (
	"context"
	"encoding/base64"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/integrations/internal/app"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

// chatSignatures: a signature is new the first time only, also when replicas see it at
// once.
func chatSignatures(t *testing.T, all Stores) {
	s := all.Chat
	ctx := context.Background()
	until := at.Add(5 * time.Minute)
	fresh, err := s.FirstSignature(ctx, "v0=a", until)
	require.NoError(t, err)
	assert.True(t, fresh)
	fresh, err = s.FirstSignature(ctx, "v0=a", until)
	require.NoError(t, err)
	assert.False(t, fresh, "a replay")
	fresh, err = s.FirstSignature(ctx, "v0=b", until)
	require.NoError(t, err)
	assert.True(t, fresh)

	var firsts atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			fresh, err := s.FirstSignature(ctx, "v0=raced", until)
			assert.NoError(t, err)
			if fresh {
				firsts.Add(1)
			}
		})
	}
	wg.Wait()
	assert.EqualValues(t, 1, firsts.Load())
}

func chatRecords(t *testing.T, all Stores) {
	s := all.Chat
	ctx := context.Background()
	installed, err := s.AnyChatInstall(ctx)
	require.NoError(t, err)
	assert.False(t, installed)
	_, err = s.FindChatInstall(ctx, "T1")
	assert.ErrorIs(t, err, domain.ErrChatNotFound)

	install := domain.ChatInstall{WorkspaceID: "T1", WorkspaceName: "Acme", BotUserID: "UBOT", BotToken: "xoxb-1", Scope: "chat:write,commands", InstalledAt: at}
	require.NoError(t, s.SaveChatInstall(ctx, install))
	installed, err = s.AnyChatInstall(ctx)
	require.NoError(t, err)
	assert.True(t, installed)
	got, err := s.FindChatInstall(ctx, "T1")
	require.NoError(t, err)
	assert.Equal(t, install, got, "the bot token opened")
	// Installed again: the new token replaces the old.
	install.BotToken, install.InstalledAt = "xoxb-2", at.Add(time.Hour)
	require.NoError(t, s.SaveChatInstall(ctx, install))
	got, err = s.FindChatInstall(ctx, "T1")
	require.NoError(t, err)
	assert.Equal(t, install, got)

	_, err = s.FindChatLink(ctx, "T1", "U1")
	assert.ErrorIs(t, err, domain.ErrChatNotFound)
	link := domain.ChatLink{WorkspaceID: "T1", ChatUserID: "U1", UserID: "u-ann", Email: "ann@example.com", LinkedAt: at}
	require.NoError(t, s.SaveChatLink(ctx, link))
	other := domain.ChatLink{WorkspaceID: "T2", ChatUserID: "U1", UserID: "u-bob", Email: "bob@example.com", LinkedAt: at}
	require.NoError(t, s.SaveChatLink(ctx, other))
	gotLink, err := s.FindChatLink(ctx, "T1", "U1")
	require.NoError(t, err)
	assert.Equal(t, link, gotLink)
	gotLink, err = s.FindChatLink(ctx, "T2", "U1")
	require.NoError(t, err)
	assert.Equal(t, other, gotLink, "a user id is the workspace's")
	link.UserID, link.Email, link.LinkedAt = "u-own", "owen@example.com", at.Add(time.Minute)
	require.NoError(t, s.SaveChatLink(ctx, link))
	gotLink, err = s.FindChatLink(ctx, "T1", "U1")
	require.NoError(t, err)
	assert.Equal(t, link, gotLink, "linked again, to whom the email names now")

	_, err = s.FindRunChannel(ctx, "run1")
	assert.ErrorIs(t, err, domain.ErrChatNotFound)
	ch := domain.ChatChannel{WorkspaceID: "T1", ChannelID: "C1"}
	require.NoError(t, s.SaveRunChannel(ctx, "run1", ch, at.Add(time.Hour)))
	gotCh, err := s.FindRunChannel(ctx, "run1")
	require.NoError(t, err)
	assert.Equal(t, ch, gotCh)

	_, err = s.FindTeamChannel(ctx, "ops")
	assert.ErrorIs(t, err, domain.ErrChatNotFound)
	require.NoError(t, s.SetTeamChannel(ctx, "ops", &ch))
	gotCh, err = s.FindTeamChannel(ctx, "ops")
	require.NoError(t, err)
	assert.Equal(t, ch, gotCh)
	moved := domain.ChatChannel{WorkspaceID: "T1", ChannelID: "C2"}
	require.NoError(t, s.SetTeamChannel(ctx, "ops", &moved))
	gotCh, err = s.FindTeamChannel(ctx, "ops")
	require.NoError(t, err)
	assert.Equal(t, moved, gotCh)
	require.NoError(t, s.SetTeamChannel(ctx, "ops", nil))
	_, err = s.FindTeamChannel(ctx, "ops")
	assert.ErrorIs(t, err, domain.ErrChatNotFound, "stopped")
	require.NoError(t, s.SetTeamChannel(ctx, "dev", nil), "stopping what never started")
}

func chatMessages(t *testing.T, all Stores) {
	s := all.Chat
	ctx := context.Background()
	posted, err := s.Posted(ctx, "e1@T1/C1")
	require.NoError(t, err)
	assert.False(t, posted)
	require.NoError(t, s.MarkPosted(ctx, "e1@T1/C1", at.Add(time.Hour)))
	posted, err = s.Posted(ctx, "e1@T1/C1")
	require.NoError(t, err)
	assert.True(t, posted)
	require.NoError(t, s.MarkPosted(ctx, "e1@T1/C1", at.Add(time.Hour)), "marked again")

	ms, err := s.FindActionMessages(ctx, "a1")
	require.NoError(t, err)
	assert.Empty(t, ms)
	c1 := app.ActionMessage{ActionID: "a1", Channel: domain.ChatChannel{WorkspaceID: "T1", ChannelID: "C1"}, TS: "1.1", Text: "Approve?", Quorum: 2}
	c2 := app.ActionMessage{ActionID: "a1", Channel: domain.ChatChannel{WorkspaceID: "T1", ChannelID: "C2"}, TS: "2.1", Text: "Approve?", Quorum: 2}
	elsewhere := app.ActionMessage{ActionID: "a2", Channel: domain.ChatChannel{WorkspaceID: "T1", ChannelID: "C1"}, TS: "3.1", Text: "Other"}
	for _, m := range []app.ActionMessage{c1, c2, elsewhere} {
		require.NoError(t, s.SaveActionMessage(ctx, m))
	}
	c1.Votes, c1.Closed, c1.Text = 1, true, "Approved"
	require.NoError(t, s.SaveActionMessage(ctx, c1))
	ms, err = s.FindActionMessages(ctx, "a1")
	require.NoError(t, err)
	assert.ElementsMatch(t, []app.ActionMessage{c1, c2}, ms, "one per channel, the last saved")
	ms, err = s.FindActionMessages(ctx, "a2")
	require.NoError(t, err)
	assert.Equal(t, []app.ActionMessage{elsewhere}, ms)
}

// chatSweep: the signatures, runs' channels and posted marks expire; installs, links,
// teams' channels and an action's recent messages stay.
func chatSweep(t *testing.T, all Stores) {
	s := all.Chat
	ctx := context.Background()
	soon, later := at.Add(time.Minute), at.Add(time.Hour)
	ch := domain.ChatChannel{WorkspaceID: "T1", ChannelID: "C1"}
	for _, sig := range []struct {
		id    string
		until time.Time
	}{{"v0=soon", soon}, {"v0=later", later}} {
		_, err := s.FirstSignature(ctx, sig.id, sig.until)
		require.NoError(t, err)
	}
	require.NoError(t, s.SaveRunChannel(ctx, "soon", ch, soon))
	require.NoError(t, s.SaveRunChannel(ctx, "later", ch, later))
	require.NoError(t, s.MarkPosted(ctx, "soon", soon))
	require.NoError(t, s.MarkPosted(ctx, "later", later))
	require.NoError(t, s.SaveChatInstall(ctx, domain.ChatInstall{WorkspaceID: "T1", BotToken: "xoxb"}))
	require.NoError(t, s.SaveChatLink(ctx, domain.ChatLink{WorkspaceID: "T1", ChatUserID: "U1", UserID: "u1"}))
	require.NoError(t, s.SetTeamChannel(ctx, "ops", &ch))
	m := app.ActionMessage{ActionID: "a1", Channel: ch, TS: "1.1", Text: "Approve?"}
	require.NoError(t, s.SaveActionMessage(ctx, m))

	require.NoError(t, s.Sweep(ctx, at.Add(2*time.Minute)))

	fresh, err := s.FirstSignature(ctx, "v0=soon", later)
	require.NoError(t, err)
	assert.True(t, fresh, "an expired signature is forgotten")
	fresh, err = s.FirstSignature(ctx, "v0=later", later)
	require.NoError(t, err)
	assert.False(t, fresh)
	_, err = s.FindRunChannel(ctx, "soon")
	assert.ErrorIs(t, err, domain.ErrChatNotFound)
	_, err = s.FindRunChannel(ctx, "later")
	assert.NoError(t, err)
	posted, err := s.Posted(ctx, "soon")
	require.NoError(t, err)
	assert.False(t, posted)
	posted, err = s.Posted(ctx, "later")
	require.NoError(t, err)
	assert.True(t, posted)
	_, err = s.FindChatInstall(ctx, "T1")
	assert.NoError(t, err)
	_, err = s.FindChatLink(ctx, "T1", "U1")
	assert.NoError(t, err)
	_, err = s.FindTeamChannel(ctx, "ops")
	assert.NoError(t, err)
	ms, err := s.FindActionMessages(ctx, "a1")
	require.NoError(t, err)
	assert.Equal(t, []app.ActionMessage{m}, ms, "kept for weeks after they are saved")
}

// sealedAtRest: a bot token is nowhere at rest, in clear or in base64, and opens again.
func sealedAtRest(t *testing.T, h Harness) {
	s := h.New(t)
	ctx := context.Background()
	const token = "xoxb-4242-Secret-bot-token"
	require.NoError(t, s.Chat.SaveChatInstall(ctx, domain.ChatInstall{WorkspaceID: "T9", WorkspaceName: "Sealed Workspace", BotUserID: "UBOT", BotToken: token, InstalledAt: at}))
	raw := string(h.AtRest(t, s))
	require.Contains(t, raw, "Sealed Workspace", "what is at rest is read")
	assert.NotContains(t, raw, token)
	assert.NotContains(t, raw, base64.StdEncoding.EncodeToString([]byte(token)))
	got, err := s.Chat.FindChatInstall(ctx, "T9")
	require.NoError(t, err)
	assert.Equal(t, token, got.BotToken)
}
