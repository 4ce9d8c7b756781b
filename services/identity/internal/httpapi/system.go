package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/services/identity/internal/app"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// systemHandlers serve /settings, /features, /context and /navigation.
type systemHandlers struct {
	system *app.System
}

// SystemRoutes registers the settings, features, context and navigation endpoints on r,
// which already authenticates callers.
func SystemRoutes(r fiber.Router, system *app.System) {
	h := &systemHandlers{system: system}
	r.Get("/settings", h.getSettings)
	r.Put("/settings", h.putSettings)
	r.Get("/features", h.getFeatures)
	r.Get("/context", h.getContext)
	r.Get("/navigation", h.getNavigation)
}

// Setting is a setting as the API shows it; secured values read "********" when set.
type Setting struct {
	Key         string          `json:"key"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Type        string          `json:"type"`
	Config      []SettingConfig `json:"config"`
}

// SettingConfig is one configurable value of a setting.
type SettingConfig struct {
	Key          string        `json:"key"`
	Label        string        `json:"label"`
	Description  string        `json:"description,omitempty"`
	Type         string        `json:"type"`
	Value        string        `json:"value"`
	DefaultValue string        `json:"defaultValue"`
	Options      []ParamOption `json:"options,omitempty"`
	Required     bool          `json:"required"`
}

func settingsView(st domain.Settings) []Setting {
	st = st.Masked()
	out := make([]Setting, len(st.Items))
	for i, s := range st.Items {
		cfg := make([]SettingConfig, len(s.Config))
		for j, c := range s.Config {
			var opts []ParamOption
			for _, o := range c.Options {
				opts = append(opts, ParamOption(o))
			}
			cfg[j] = SettingConfig{
				Key: c.Key, Label: c.Label, Description: c.Description, Type: string(c.Type),
				Value: c.Value, DefaultValue: c.DefaultValue, Options: opts, Required: c.Required,
			}
		}
		out[i] = Setting{Key: s.Key, Name: s.Name, Description: s.Description, Type: s.Type, Config: cfg}
	}
	return out
}

// SettingRequest is one item of the body of PUT /settings: new values for config keys of
// an existing setting. Other fields (names, labels, types) are ignored; values may be
// strings, numbers, booleans, or lists of strings (kept comma-separated).
type SettingRequest struct {
	Key    string `json:"key"`
	Config []struct {
		Key   string          `json:"key"`
		Value json.RawMessage `json:"value"`
	} `json:"config"`
}

func (h *systemHandlers) getSettings(c *fiber.Ctx) error {
	st, err := h.system.Settings(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(settingsView(st))
}

func (h *systemHandlers) putSettings(c *fiber.Ctx) error {
	var req []SettingRequest
	if err := httpx.DecodeJSON(c, &req); err != nil {
		return err
	}
	changes := make([]domain.SettingChange, len(req))
	for i, s := range req {
		changes[i].Key = s.Key
		for j, cfg := range s.Config {
			v, err := configValue(fmt.Sprintf("[%d].config[%d].value", i, j), cfg.Value)
			if err != nil {
				return err
			}
			changes[i].Config = append(changes[i].Config, domain.ConfigChange{Key: cfg.Key, Value: v})
		}
	}
	st, err := h.system.UpdateSettings(c.UserContext(), changes)
	if err != nil {
		return err
	}
	return c.JSON(settingsView(st))
}

// configValue reads a config value as text: absent or null is no change.
func configValue(field string, raw json.RawMessage) (*string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return &s, nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		s = strings.Join(list, ",")
		return &s, nil
	}
	if raw[0] != '{' && raw[0] != '[' {
		// A number or a boolean, as JSON writes it.
		s = string(raw)
		return &s, nil
	}
	return nil, apperr.Invalid(apperr.RequestInvalid, "A setting value must be a string, number, boolean or list of strings.",
		apperr.FieldError{Field: field, Message: "must be a string, number, boolean or list of strings"})
}

// Features is the body of GET /features.
type Features struct {
	Features map[string]bool `json:"features"`
}

func (h *systemHandlers) getFeatures(c *fiber.Ctx) error {
	f, err := h.system.Features(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(Features{Features: f})
}

// NavItem is one navigation entry.
type NavItem struct {
	Name       string    `json:"name,omitempty"`
	Type       string    `json:"type"`
	Icon       string    `json:"icon,omitempty"`
	Link       string    `json:"link,omitempty"`
	ChildLinks []NavItem `json:"childLinks,omitempty"`
	Disabled   bool      `json:"disabled"`
	Beta       bool      `json:"beta"`
}

func navView(items []domain.NavItem) []NavItem {
	out := make([]NavItem, len(items))
	for i, it := range items {
		out[i] = NavItem{
			Name: it.Name, Type: it.Type, Icon: it.Icon, Link: it.Link, Disabled: it.Disabled, Beta: it.Beta,
		}
		if len(it.ChildLinks) > 0 {
			out[i].ChildLinks = navView(it.ChildLinks)
		}
	}
	return out
}

func (h *systemHandlers) getNavigation(c *fiber.Ctx) error {
	items, err := h.system.Navigation(c.UserContext(), strings.TrimSpace(c.Query("team")))
	if err != nil {
		return err
	}
	return c.JSON(navView(items))
}

// HeaderNavigationResponse is the body of GET /context.
type HeaderNavigationResponse struct {
	Platform        PlatformView     `json:"platform"`
	Features        map[string]bool  `json:"features"`
	Navigation      []NavItem        `json:"navigation"`
	PlatformMessage *PlatformMessage `json:"platformMessage,omitempty"`
}

// PlatformView describes the instance to the web UI's header.
type PlatformView struct {
	Name            string `json:"name"`
	Version         string `json:"version"`
	AppName         string `json:"appName"`
	PlatformName    string `json:"platformName"`
	CommunityURL    string `json:"communityUrl,omitempty"`
	PrivateTeams    bool   `json:"privateTeams"`
	DisplayLogo     bool   `json:"displayLogo"`
	LogoURL         string `json:"logoURL,omitempty"`
	SignOutURL      string `json:"signOutUrl,omitempty"`
	BaseServicesURL string `json:"baseServicesUrl,omitempty"`
}

// PlatformMessage is a message the header shows everyone.
type PlatformMessage struct {
	Kind    string `json:"kind"`
	Title   string `json:"title,omitempty"`
	Message string `json:"message"`
}

func (h *systemHandlers) getContext(c *fiber.Ctx) error {
	ctx, err := h.system.Context(c.UserContext())
	if err != nil {
		return err
	}
	p := ctx.Platform
	out := HeaderNavigationResponse{
		Platform: PlatformView{
			Name: p.Name, Version: p.Version, AppName: p.AppName, PlatformName: p.PlatformName,
			CommunityURL: p.CommunityURL, PrivateTeams: p.PrivateTeams, DisplayLogo: p.DisplayLogo,
			LogoURL: p.LogoURL, SignOutURL: p.SignOutURL, BaseServicesURL: p.BaseServicesURL,
		},
		Features:   ctx.Features,
		Navigation: navView(ctx.Navigation),
	}
	if m := ctx.Message; m != nil {
		out.PlatformMessage = &PlatformMessage{Kind: m.Kind, Title: m.Title, Message: m.Message}
	}
	return c.JSON(out)
}
