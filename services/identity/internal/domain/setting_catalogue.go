package domain

import "strconv"

// Setting keys of the catalogue.
const (
	SettingFeatures = "features"
	SettingQuotas   = "quotas"
	SettingTask     = "task"
	SettingRuns     = "runs"
	SettingActions  = "actions"
	SettingEvents   = "events"
	SettingChat     = "chat"
	SettingCodeHost = "codehost"
	SettingPlatform = "platform"
)

// Default quotas of a team (API.md §3, Quotas), seeded into the quotas setting.
const (
	DefaultMaxWorkflowCount       = 100
	DefaultMaxWorkflowRunMonthly  = 100_000
	DefaultMaxWorkflowStorage     = 25 // GiB
	DefaultMaxWorkflowRunStorage  = 2  // GiB
	DefaultMaxWorkflowRunDuration = 1440
	DefaultMaxConcurrentRuns      = 100
	// DefaultTaskTimeout is a task's timeout in minutes when neither it nor its workflow sets one.
	DefaultTaskTimeout = 90
	// DefaultMaxRunDepth is how deep runworkflow tasks may nest child runs.
	DefaultMaxRunDepth = 10
	// DefaultMaxTreeRuns is how many runs one run may start below it, at every depth
	// together: depth alone still lets a workflow with several runworkflow tasks multiply.
	DefaultMaxTreeRuns = 1000
)

// Features are the feature flags GET /features reports, in the order listed; each is a
// boolean config of the features setting.
var Features = []string{
	"activity", "insights", "global.parameters", "team.parameters", "team.tasks", "team.management",
	"user.management", "workflow.quotas", "workflow.tokens", "workflow.triggers", "enable.verified.tasks.edit",
}

// featuresOff are the flags that start turned off: editing verified (curated) tasks is
// an admin's deliberate choice.
var featuresOff = map[string]bool{"enable.verified.tasks.edit": true}

var featureDescriptions = map[string]string{
	"activity":                   "The activity view of runs.",
	"insights":                   "Insights on runs.",
	"global.parameters":          "Global parameters, managed by admins.",
	"team.parameters":            "Team parameters.",
	"team.tasks":                 "Tasks owned by teams.",
	"team.management":            "Team management by team owners.",
	"user.management":            "User management by admins.",
	"workflow.quotas":            "Team quotas and their enforcement.",
	"workflow.tokens":            "Workflow tokens.",
	"workflow.triggers":          "Workflow triggers other than manual.",
	"enable.verified.tasks.edit": "Editing verified tasks.",
}

// HeaderFeatures are the platform flags of the context's header, configs of the platform
// setting.
var HeaderFeatures = []string{"notifications.enabled", "support.enabled", "docs.enabled", "consent.enabled"}

func boolConfig(key, label, description string, on bool) SettingConfig {
	return SettingConfig{Key: key, Label: label, Description: description, Type: ConfigBoolean, DefaultValue: strconv.FormatBool(on)}
}

func numberConfig(key, label, description string, def int) SettingConfig {
	return SettingConfig{Key: key, Label: label, Description: description, Type: ConfigNumber, DefaultValue: strconv.Itoa(def), Required: true}
}

func textConfig(key, label, description, def string) SettingConfig {
	return SettingConfig{Key: key, Label: label, Description: description, Type: ConfigText, DefaultValue: def}
}

func securedConfig(key, label, description string) SettingConfig {
	return SettingConfig{Key: key, Label: label, Description: description, Type: ConfigSecured}
}

// SettingCatalogue is every setting Baton knows, with its defaults: what a first start
// seeds, and what later starts add to or refresh in what is stored (see Settings.Seed).
func SettingCatalogue() []Setting {
	features := make([]SettingConfig, len(Features))
	for i, f := range Features {
		features[i] = boolConfig(f, f, featureDescriptions[f], !featuresOff[f])
	}
	return []Setting{
		{
			Key: SettingFeatures, Name: "Features", Type: "system",
			Description: "Parts of Baton turned on or off for everyone.",
			Config:      features,
		},
		{
			Key: SettingQuotas, Name: "Team quotas", Type: "system",
			Description: "The quotas of a team whose own quotas do not say otherwise.",
			Config: []SettingConfig{
				numberConfig("maxWorkflowCount", "Workflows", "Workflows a team may have.", DefaultMaxWorkflowCount),
				numberConfig("maxWorkflowRunMonthly", "Runs a month", "Runs a team may start in a month.", DefaultMaxWorkflowRunMonthly),
				numberConfig("maxWorkflowStorage", "Workflow storage (GiB)", "Storage of a workflow's workspace.", DefaultMaxWorkflowStorage),
				numberConfig("maxWorkflowRunStorage", "Run storage (GiB)", "Storage of a run's workspace.", DefaultMaxWorkflowRunStorage),
				numberConfig("maxWorkflowRunDuration", "Run duration (minutes)", "How long a run may take.", DefaultMaxWorkflowRunDuration),
				numberConfig("maxConcurrentRuns", "Concurrent runs", "Runs of a team running at once; more wait queued.", DefaultMaxConcurrentRuns),
			},
		},
		{
			Key: SettingTask, Name: "Tasks", Type: "system",
			Description: "Defaults of task execution.",
			Config: []SettingConfig{
				numberConfig("default.timeout", "Default timeout (minutes)", "A task's timeout when neither it nor its workflow sets one.", DefaultTaskTimeout),
			},
		},
		{
			Key: SettingRuns, Name: "Runs", Type: "system",
			Description: "Limits of workflow runs.",
			Config: []SettingConfig{
				numberConfig("maxDepth", "Child run depth", "How deep runs started by runworkflow tasks may nest; a runworkflow task that would go deeper ends invalid.", DefaultMaxRunDepth),
				numberConfig("maxTreeRuns", "Runs below a run", "How many runs one run may start below it through runworkflow tasks, at every depth together; a runworkflow task that would start one more ends invalid.", DefaultMaxTreeRuns),
			},
		},
		{
			Key: SettingActions, Name: "Actions", Type: "system",
			Description: "Rules of approvals and manual actions.",
			Config: []SettingConfig{
				boolConfig("preventSelfApproval", "Prevent self-approval", "The user who started a run cannot approve its approval steps.", false),
			},
		},
		{
			Key: SettingEvents, Name: "Event sinks", Type: "system",
			Description: "Where run and task-run status events are delivered.",
			Config: []SettingConfig{
				textConfig("sinks", "Sink URLs", "HTTP or HTTPS URLs, comma-separated; each receives every status event as a CloudEvent.", ""),
			},
		},
		{
			Key: SettingChat, Name: "Chat", Type: "integration",
			Description: "Credentials of the chat-platform app.",
			Config: []SettingConfig{
				textConfig("clientId", "Client ID", "The app's OAuth client ID, for installs.", ""),
				securedConfig("clientSecret", "Client secret", "The app's OAuth client secret, for installs."),
				securedConfig("signingSecret", "Signing secret", "Verifies the signature of requests the chat platform sends."),
				securedConfig("botToken", "Bot token", "Posts messages as the app."),
			},
		},
		{
			Key: SettingCodeHost, Name: "Code host", Type: "integration",
			Description: "Credentials of the code-host app.",
			Config: []SettingConfig{
				textConfig("appId", "App ID", "The code-host app's ID.", ""),
				securedConfig("webhookSecret", "Webhook secret", "Verifies the signature of webhook deliveries."),
				securedConfig("privateKey", "Private key", "The app's private key (PEM), to act as the app."),
			},
		},
		{
			Key: SettingPlatform, Name: "Platform", Type: "system",
			Description: "What the web UI's header shows.",
			Config: []SettingConfig{
				textConfig("appName", "App name", "The application's name in the header.", PlatformName),
				textConfig("communityUrl", "Community URL", "A link to the users' community.", ""),
				textConfig("logoURL", "Logo URL", "The logo shown when displayLogo is on.", ""),
				boolConfig("displayLogo", "Display logo", "Show the logo in the header.", false),
				boolConfig("privateTeams", "Private teams", "Tells the UI that teams are private to their members.", false),
				textConfig("signOutUrl", "Sign-out URL", "Where signing out leads.", ""),
				textConfig("baseServicesUrl", "Base services URL", "The public URL of the API, for clients that need it.", ""),
				textConfig("message", "Platform message", "A message shown to everyone; empty for none.", ""),
				{Key: "messageKind", Label: "Message kind", Description: "How the message is shown.", Type: ConfigSelect,
					DefaultValue: "info", Required: true,
					Options: []Option{{Key: "info", Value: "Information"}, {Key: "warning", Value: "Warning"}, {Key: "error", Value: "Error"}}},
				boolConfig("notifications.enabled", "Notifications", "The header's notifications.", false),
				boolConfig("support.enabled", "Support", "The header's support link.", false),
				boolConfig("docs.enabled", "Docs", "The header's documentation link.", true),
				boolConfig("consent.enabled", "Consent", "The header's privacy consent.", false),
			},
		},
	}
}

// PlatformName is the product's name in the context's header.
const PlatformName = "Baton"

// FeatureFlags returns the feature flags as GET /features reports them.
func (s Settings) FeatureFlags() map[string]bool {
	out := make(map[string]bool, len(Features))
	for _, f := range Features {
		out[f] = s.Bool(SettingFeatures + "." + f)
	}
	return out
}

// TaskDefaultTimeout is a task's timeout in minutes when neither it nor its workflow
// sets one: the task.default.timeout setting, DefaultTaskTimeout when unset.
func (s Settings) TaskDefaultTimeout() int {
	return int(s.Int(SettingTask+".default.timeout", DefaultTaskTimeout))
}

// MaxRunDepth is how deep child runs may nest (runs.maxDepth), DefaultMaxRunDepth when
// unset.
func (s Settings) MaxRunDepth() int {
	return int(s.Int(SettingRuns+".maxDepth", DefaultMaxRunDepth))
}

// MaxTreeRuns is how many runs one run may start below it (runs.maxTreeRuns),
// DefaultMaxTreeRuns when unset.
func (s Settings) MaxTreeRuns() int {
	return int(s.Int(SettingRuns+".maxTreeRuns", DefaultMaxTreeRuns))
}

// PreventSelfApproval reports whether a run's initiator is stopped from approving it
// (actions.preventSelfApproval).
func (s Settings) PreventSelfApproval() bool { return s.Bool(SettingActions + ".preventSelfApproval") }

// Feature reports whether the feature flag f is on.
func (s Settings) Feature(f string) bool { return s.Bool(SettingFeatures + "." + f) }
