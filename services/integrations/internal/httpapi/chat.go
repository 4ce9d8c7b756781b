package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/integrations/internal/app"
	"github.com/baton-flow/baton/services/integrations/internal/chatapi"
)

// Headers of the chat platform's signed requests (API.md §7).
const (
	headerChatSignature = "x-chat-signature"
	headerChatTimestamp = "x-chat-request-timestamp"
)

func (h *handlers) chatInstall(c *fiber.Ctx) error {
	to, err := h.Chat.InstallURL(c.UserContext())
	if err != nil {
		return err
	}
	return c.Redirect(to, fiber.StatusFound)
}

func (h *handlers) chatAuth(c *fiber.Ctx) error {
	in, err := h.Chat.Authorize(c.UserContext(), c.Query("code"), c.Query("state"))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"installed": true, "workspaceId": in.WorkspaceID, "workspaceName": in.WorkspaceName, "botUserId": in.BotUserID})
}

// verifyChat checks the request's signature over its raw body, its timestamp, and that it
// is not a replay; nothing of the request is read before.
func (h *handlers) verifyChat(c *fiber.Ctx) ([]byte, error) {
	body := c.Body()
	if err := h.Chat.Verify(c.UserContext(), c.Get(headerChatTimestamp), c.Get(headerChatSignature), body); err != nil {
		return nil, err
	}
	return body, nil
}

func malformed(err error) error {
	return apperr.Wrap(apperr.RequestInvalid, err, "The chat request is malformed.")
}

func (h *handlers) chatCommands(c *fiber.Ctx) error {
	body, err := h.verifyChat(c)
	if err != nil {
		return err
	}
	cmd, err := chatapi.ParseCommand(body)
	if err != nil {
		return malformed(err)
	}
	reply, err := h.Chat.Command(c.UserContext(), app.ChatRequest{WorkspaceID: cmd.WorkspaceID, UserID: cmd.UserID,
		ChannelID: cmd.ChannelID, TriggerID: cmd.TriggerID, Text: cmd.Text})
	if err != nil {
		return err
	}
	return c.JSON(chatapi.Reply(reply.Message, reply.InChannel))
}

func (h *handlers) chatEvents(c *fiber.Ctx) error {
	body, err := h.verifyChat(c)
	if err != nil {
		return err
	}
	ev, err := chatapi.ParseEvent(body)
	if err != nil {
		return malformed(err)
	}
	switch ev.Type {
	case chatapi.EventURLVerification:
		return c.JSON(fiber.Map{"challenge": ev.Challenge})
	case chatapi.EventCallback:
		// The platform retries an event it sees fail; an App Home not drawn is not worth it.
		if err := h.Chat.Event(c.UserContext(), app.ChatEvent{WorkspaceID: ev.WorkspaceID, Type: ev.EventType, User: ev.User}); err != nil {
			h.Chat.Log.Warn("chat event not handled", "type", ev.EventType, "error", err)
		}
	}
	return c.JSON(fiber.Map{})
}

func (h *handlers) chatInteractivity(c *fiber.Ctx) error {
	body, err := h.verifyChat(c)
	if err != nil {
		return err
	}
	in, err := chatapi.ParseInteraction(body)
	if err != nil {
		return malformed(err)
	}
	err = h.Chat.Interact(c.UserContext(), app.ChatInteraction{
		ChatRequest: app.ChatRequest{WorkspaceID: in.WorkspaceID, UserID: in.UserID, ChannelID: in.ChannelID, TriggerID: in.TriggerID},
		Type:        in.Type, MessageTS: in.MessageTS, ActionID: in.ActionID, Value: in.Value,
		CallbackID: in.CallbackID, Metadata: in.Metadata, Values: in.Values,
	})
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{})
}
