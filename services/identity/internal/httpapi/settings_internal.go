package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/services/identity/internal/app"
)

// SettingsInternalRoutes registers, on r (/internal/v1, Baton's services only), the read
// of the settings the integrations service works by, secured values opened:
//
//	GET /integration-settings → 200 identityapi.IntegrationSettings
func SettingsInternalRoutes(r fiber.Router, system *app.System) {
	r.Get(identityapi.IntegrationSettingsRoute, func(c *fiber.Ctx) error {
		st, err := system.ResolvedSettings(c.UserContext())
		if err != nil {
			return err
		}
		value := func(path string) string { v, _ := st.Value(path); return v }
		c.Set(fiber.HeaderCacheControl, "no-store")
		return c.JSON(identityapi.IntegrationSettings{
			Sinks: append([]string{}, st.SinkURLs()...), // [] rather than null when there are none
			Chat: identityapi.ChatSettings{ClientID: value("chat.clientId"), ClientSecret: value("chat.clientSecret"),
				SigningSecret: value("chat.signingSecret"), BotToken: value("chat.botToken")},
			CodeHost: identityapi.CodeHostSettings{AppID: value("codehost.appId"), WebhookSecret: value("codehost.webhookSecret"),
				PrivateKey: value("codehost.privateKey")},
		})
	})
}
