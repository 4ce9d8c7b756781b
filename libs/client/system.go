package client

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
)

// ListGlobalParameters lists the global parameters (secret values masked).
// listGlobalParameters.
func (c *Client) ListGlobalParameters(ctx context.Context) ([]AbstractParam, error) {
	var out []AbstractParam
	_, err := c.call(ctx, http.MethodGet, p("parameters"), nil, nil, &out)
	return out, err
}

// CreateGlobalParameter creates a global parameter (admins). createGlobalParameter.
func (c *Client) CreateGlobalParameter(ctx context.Context, param *AbstractParam) (*AbstractParam, error) {
	var out AbstractParam
	_, err := c.call(ctx, http.MethodPost, p("parameters"), nil, param, &out)
	return ret(&out, err)
}

// SaveGlobalParameter replaces a global parameter by name, or creates it (admins).
// saveGlobalParameter.
func (c *Client) SaveGlobalParameter(ctx context.Context, param *AbstractParam) (*AbstractParam, error) {
	var out AbstractParam
	_, err := c.call(ctx, http.MethodPut, p("parameters"), nil, param, &out)
	return ret(&out, err)
}

// DeleteGlobalParameter deletes a global parameter (admins). deleteGlobalParameter.
func (c *Client) DeleteGlobalParameter(ctx context.Context, name string) error {
	_, err := c.call(ctx, http.MethodDelete, p("parameters", name), nil, nil, nil)
	return err
}

// GetSettings lists the instance's settings (secured values masked). getSettings.
func (c *Client) GetSettings(ctx context.Context) ([]Setting, error) {
	var out []Setting
	_, err := c.call(ctx, http.MethodGet, p("settings"), nil, nil, &out)
	return out, err
}

// UpdateSettings changes values of existing settings (admins) and answers the settings.
// updateSettings.
func (c *Client) UpdateSettings(ctx context.Context, changes []SettingRequest) ([]Setting, error) {
	var out []Setting
	_, err := c.call(ctx, http.MethodPut, p("settings"), nil, changes, &out)
	return out, err
}

// GetFeatures reads the feature flags. getFeatures.
func (c *Client) GetFeatures(ctx context.Context) (*Features, error) {
	var out Features
	_, err := c.call(ctx, http.MethodGet, p("features"), nil, nil, &out)
	return ret(&out, err)
}

// GetContext reads what the web UI's header shows: the platform and its features.
// getContext.
func (c *Client) GetContext(ctx context.Context) (*HeaderNavigationResponse, error) {
	var out HeaderNavigationResponse
	_, err := c.call(ctx, http.MethodGet, p("context"), nil, nil, &out)
	return ret(&out, err)
}

// GetNavigation lists the web UI's navigation for the caller, in team if given.
// getNavigation.
func (c *Client) GetNavigation(ctx context.Context, team string) ([]Navigation, error) {
	var out []Navigation
	_, err := c.call(ctx, http.MethodGet, p("navigation"), newQuery().str("team", team).values(), nil, &out)
	return out, err
}

// Activate unlocks a fresh installation with its one-time code and answers whether the
// instance is activated; with otc "" it only reads that. activate.
func (c *Client) Activate(ctx context.Context, otc string) (bool, error) {
	var body any
	if otc != "" {
		body = OneTimeCode{OTC: otc}
	}
	var out bool
	_, err := c.call(ctx, http.MethodPut, p("activate"), nil, body, &out)
	return out, err
}

// GetOpenAPI answers the contract, the OpenAPI document the server serves (YAML).
// getOpenAPI.
func (c *Client) GetOpenAPI(ctx context.Context) ([]byte, error) {
	return c.raw(ctx, request{method: http.MethodGet, path: p("openapi.yaml"), accept: "application/yaml"})
}

// ListIntegrations lists the code-host and chat integrations and their state for team.
// listIntegrations.
func (c *Client) ListIntegrations(ctx context.Context, team string) ([]Integration, error) {
	var out []Integration
	_, err := c.call(ctx, http.MethodGet, p("integration"), newQuery().str("team", team).values(), nil, &out)
	return out, err
}

// CodehostInstallationQuery is the landing step of the code host's install flow: what
// the code host adds to its redirect.
type CodehostInstallationQuery struct {
	ID             string
	InstallationID int64
	SetupAction    string
	Team           string
	State          string
}

// CodehostInstallation reads a code-host installation, linking it to a team when the
// query carries the install flow's signed state. codehostInstallation.
func (c *Client) CodehostInstallation(ctx context.Context, q CodehostInstallationQuery) (*CodeHostInstallation, error) {
	v := newQuery().str("id", q.ID).str("setup_action", q.SetupAction).str("team", q.Team).str("state", q.State)
	if q.InstallationID != 0 {
		v.str("installation_id", strconv.FormatInt(q.InstallationID, 10))
	}
	var out CodeHostInstallation
	_, err := c.call(ctx, http.MethodGet, p("integration", "codehost", "installation"), v.values(), nil, &out)
	return ret(&out, err)
}

// CodehostLink links a code-host installation to a team (team owners, with proof of the
// installation). codehostLink.
func (c *Client) CodehostLink(ctx context.Context, req *CodeHostLinkRequest) (*CodeHostInstallation, error) {
	var out CodeHostInstallation
	_, err := c.call(ctx, http.MethodPost, p("integration", "codehost", "link"), nil, req, &out)
	return ret(&out, err)
}

// CodehostUnlink unlinks a code-host installation from a team. codehostUnlink.
func (c *Client) CodehostUnlink(ctx context.Context, req *CodeHostLinkRequest) error {
	_, err := c.call(ctx, http.MethodPost, p("integration", "codehost", "unlink"), nil, req, nil)
	return err
}

// PostEvent sends a CloudEvent (structured mode) to run the workflow ref
// (`<team>/<workflow>`; "" takes it from the event's subject) and answers its run; the
// same source and id again answer the first run. postEvent.
func (c *Client) PostEvent(ctx context.Context, ref string, event *CloudEvent) (*WorkflowRun, error) {
	if event.SpecVersion == "" {
		e := *event
		e.SpecVersion = "1.0"
		event = &e
	}
	b, err := json.Marshal(event)
	if err != nil {
		return nil, err
	}
	resp, err := c.raw(ctx, request{method: http.MethodPost, path: p("event"), query: newQuery().str("ref", ref).values(),
		body: bytesReader(b), contentType: "application/cloudevents+json"})
	if err != nil {
		return nil, err
	}
	var out WorkflowRun
	if err := json.Unmarshal(resp, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PostWebhook runs workflow ref (`<team>/<workflow>`) with payload as its `data` param;
// its webhook trigger must be enabled. postWebhook.
func (c *Client) PostWebhook(ctx context.Context, ref string, payload any) (*WorkflowRun, error) {
	var out WorkflowRun
	_, err := c.call(ctx, http.MethodPost, p("webhook"), newQuery().str("ref", ref).values(), payload, &out)
	return ret(&out, err)
}

// PostCallback ends run runID's eventwait tasks waiting on topic as status says,
// "Succeeded" or "Failed" ("": Succeeded), with data (may be nil) as their result
// `data`; a callback that comes before its task starts is kept for it. The client's token
// may be the run's callback-token. postCallback.
func (c *Client) PostCallback(ctx context.Context, runID, topic, status string, data any) error {
	v := newQuery().str("ref", runID).str("topic", topic).str("status", status)
	_, err := c.call(ctx, http.MethodPost, p("callback"), v.values(), data, nil)
	return err
}
