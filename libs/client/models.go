package client

import "time"

// The contract's schemas (components/schemas of openapi.yaml), one Go type each. Fields
// the contract lets hold several shapes (a param's value, a run's params in a request)
// are any; fields that keep unknown content (a task's spec, a canvas node's data) are
// maps. Values: time.Time for date-times, int64 for integers.

// Changelog is the contract's Changelog: who saved a version, why and when. Only `reason` is read from requests.
type Changelog struct {
	Author string    `json:"author,omitempty"`
	Reason string    `json:"reason,omitempty"`
	Date   time.Time `json:"date,omitzero"`
}

// ChangelogEntry is the contract's ChangelogEntry: one version's changelog, as the changelog endpoints list them.
type ChangelogEntry struct {
	Version int64     `json:"version,omitempty"`
	Author  string    `json:"author,omitempty"`
	Reason  string    `json:"reason,omitempty"`
	Date    time.Time `json:"date,omitzero"`
}

// ParamOption is the contract's ParamOption.
type ParamOption struct {
	Key   string `json:"key,omitempty"`
	Value string `json:"value,omitempty"`
}

// AbstractParam is the contract's AbstractParam.
type AbstractParam struct {
	Name           string        `json:"name,omitempty"`
	Key            string        `json:"key,omitempty"`
	Label          string        `json:"label,omitempty"`
	Description    string        `json:"description,omitempty"`
	Type           string        `json:"type,omitempty"`
	Default        any           `json:"default,omitempty"`
	DefaultValue   any           `json:"defaultValue,omitempty"`
	Value          any           `json:"value,omitempty"`
	Required       bool          `json:"required,omitempty"`
	Placeholder    string        `json:"placeholder,omitempty"`
	HelperText     string        `json:"helpertext,omitempty"`
	Options        []ParamOption `json:"options,omitempty"`
	MinValueLength int64         `json:"minValueLength,omitempty"`
	MaxValueLength int64         `json:"maxValueLength,omitempty"`
	ReadOnly       bool          `json:"readOnly,omitempty"`
	HiddenValue    bool          `json:"hiddenValue,omitempty"`
}

// NameValue is the contract's NameValue: a value given to a named parameter, or a named result.
type NameValue struct {
	Name  string `json:"name,omitempty"`
	Value any    `json:"value,omitempty"`
}

// TriggerCondition is the contract's TriggerCondition: must hold on an incoming payload for the trigger to start a run.
type TriggerCondition struct {
	Field     string   `json:"field,omitempty"`
	Operation string   `json:"operation,omitempty"`
	Value     string   `json:"value,omitempty"`
	Values    []string `json:"values,omitempty"`
}

// Triggers is the contract's Triggers: how runs may start.
type Triggers struct {
	Manual   *Trigger `json:"manual,omitempty"`
	Schedule *Trigger `json:"schedule,omitempty"`
	Webhook  *Trigger `json:"webhook,omitempty"`
	Event    *Trigger `json:"event,omitempty"`
	Codehost *Trigger `json:"codehost,omitempty"`
	Github   *Trigger `json:"github,omitempty"`
}

// WorkflowWorkspace is the contract's WorkflowWorkspace: a workspace the workflow's tasks share.
type WorkflowWorkspace struct {
	Name     string         `json:"name,omitempty"`
	Type     string         `json:"type,omitempty"`
	Optional bool           `json:"optional,omitempty"`
	Spec     map[string]any `json:"spec,omitempty"`
}

// TaskDependency is the contract's TaskDependency: an edge of the DAG; unknown members (the canvas edge's data) are kept.
type TaskDependency struct {
	TaskRef            string `json:"taskRef,omitempty"`
	ExecutionCondition string `json:"executionCondition,omitempty"`
	DecisionCondition  string `json:"decisionCondition,omitempty"`
}

// WorkflowTask is the contract's WorkflowTask: a task of a workflow, a node of its DAG. Unknown fields are kept and echoed.
type WorkflowTask struct {
	Name         string            `json:"name,omitempty"`
	Type         string            `json:"type,omitempty"`
	TaskRef      string            `json:"taskRef,omitempty"`
	TaskVersion  int64             `json:"taskVersion,omitempty"`
	Timeout      int64             `json:"timeout,omitempty"`
	Retries      int64             `json:"retries,omitempty"`
	RetryDelay   int64             `json:"retryDelay,omitempty"`
	Join         string            `json:"join,omitempty"`
	Dependencies []TaskDependency  `json:"dependencies,omitempty"`
	Params       []NameValue       `json:"params,omitempty"`
	Results      []any             `json:"results,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Annotations  map[string]any    `json:"annotations,omitempty"`
}

// Workflow is the contract's Workflow: a version of a team's workflow.
type Workflow struct {
	ID           string              `json:"id,omitempty"`
	Name         string              `json:"name,omitempty"`
	DisplayName  string              `json:"displayName,omitempty"`
	Team         string              `json:"team,omitempty"`
	Status       string              `json:"status,omitempty"`
	Version      int64               `json:"version,omitempty"`
	CreationDate time.Time           `json:"creationDate,omitzero"`
	Changelog    *Changelog          `json:"changelog,omitempty"`
	Icon         string              `json:"icon,omitempty"`
	Description  string              `json:"description,omitempty"`
	Markdown     string              `json:"markdown,omitempty"`
	Labels       map[string]string   `json:"labels,omitempty"`
	Annotations  map[string]any      `json:"annotations,omitempty"`
	Timeout      int64               `json:"timeout,omitempty"`
	Retries      int64               `json:"retries,omitempty"`
	Params       []AbstractParam     `json:"params,omitempty"`
	Workspaces   []WorkflowWorkspace `json:"workspaces,omitempty"`
	Triggers     *Triggers           `json:"triggers,omitempty"`
	Tasks        []WorkflowTask      `json:"tasks,omitempty"`
}

// CanvasNode is the contract's CanvasNode: a task on the canvas.
type CanvasNode struct {
	ID       string          `json:"id,omitempty"`
	Type     string          `json:"type,omitempty"`
	Position *CanvasPosition `json:"position,omitempty"`
	Data     map[string]any  `json:"data,omitempty"`
}

// CanvasEdge is the contract's CanvasEdge: a dependency, from the upstream node (`source`) to the dependent one (`target`).
type CanvasEdge struct {
	ID     string         `json:"id,omitempty"`
	Source string         `json:"source,omitempty"`
	Target string         `json:"target,omitempty"`
	Type   string         `json:"type,omitempty"`
	Data   map[string]any `json:"data,omitempty"`
}

// WorkflowTemplate is the contract's WorkflowTemplate: a workflow without a team. Post its body to a team to create a workflow from it. Unknown fields are kept and echoed.
type WorkflowTemplate struct {
	ID           string              `json:"id,omitempty"`
	Name         string              `json:"name,omitempty"`
	DisplayName  string              `json:"displayName,omitempty"`
	Version      int64               `json:"version,omitempty"`
	CreationDate time.Time           `json:"creationDate,omitzero"`
	Changelog    *Changelog          `json:"changelog,omitempty"`
	Description  string              `json:"description,omitempty"`
	Markdown     string              `json:"markdown,omitempty"`
	Icon         string              `json:"icon,omitempty"`
	Labels       map[string]string   `json:"labels,omitempty"`
	Annotations  map[string]any      `json:"annotations,omitempty"`
	Params       []AbstractParam     `json:"params,omitempty"`
	Workspaces   []WorkflowWorkspace `json:"workspaces,omitempty"`
	Timeout      int64               `json:"timeout,omitempty"`
	Retries      int64               `json:"retries,omitempty"`
	Triggers     *Triggers           `json:"triggers,omitempty"`
	Tasks        []WorkflowTask      `json:"tasks,omitempty"`
}

// TaskSpec is the contract's TaskSpec: the task's one step. Unknown fields are kept.
type TaskSpec struct {
	Image      string           `json:"image,omitempty"`
	Command    []string         `json:"command,omitempty"`
	Arguments  []string         `json:"arguments,omitempty"`
	Script     string           `json:"script,omitempty"`
	WorkingDir string           `json:"workingDir,omitempty"`
	Envs       []EnvVar         `json:"envs,omitempty"`
	Params     []AbstractParam  `json:"params,omitempty"`
	Results    []map[string]any `json:"results,omitempty"`
	Workspaces []map[string]any `json:"workspaces,omitempty"`
	StepName   string           `json:"stepName,omitempty"`
}

// Task is the contract's Task: one version of a catalogue task.
type Task struct {
	Name         string            `json:"name,omitempty"`
	DisplayName  string            `json:"displayName,omitempty"`
	Description  string            `json:"description,omitempty"`
	Type         string            `json:"type,omitempty"`
	Version      int64             `json:"version,omitempty"`
	Status       string            `json:"status,omitempty"`
	Scope        string            `json:"scope,omitempty"`
	Team         string            `json:"team,omitempty"`
	CreationDate time.Time         `json:"creationDate,omitzero"`
	Category     string            `json:"category,omitempty"`
	Icon         string            `json:"icon,omitempty"`
	Verified     bool              `json:"verified,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Annotations  map[string]any    `json:"annotations,omitempty"`
	Changelog    *Changelog        `json:"changelog,omitempty"`
	Spec         *TaskSpec         `json:"spec,omitempty"`
}

// PipelineTask is the contract's PipelineTask.
type PipelineTask struct {
	APIVersion string         `json:"apiVersion,omitempty"`
	Kind       string         `json:"kind,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	Spec       map[string]any `json:"spec,omitempty"`
}

// RunInitiator is the contract's RunInitiator: who or what started the run.
type RunInitiator struct {
	Type string `json:"type,omitempty"`
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
}

// TaskRun is the contract's TaskRun: one task of a run. Its log is at `GET /api/v2/taskrun/{taskRunId}/log`.
type TaskRun struct {
	ID             string            `json:"id,omitempty"`
	Name           string            `json:"name,omitempty"`
	Type           string            `json:"type,omitempty"`
	Status         string            `json:"status,omitempty"`
	Phase          string            `json:"phase,omitempty"`
	StatusMessage  string            `json:"statusMessage,omitempty"`
	WorkflowRunRef string            `json:"workflowRunRef,omitempty"`
	TaskRef        string            `json:"taskRef,omitempty"`
	TaskVersion    int64             `json:"taskVersion,omitempty"`
	Params         []NameValue       `json:"params,omitempty"`
	Results        []NameValue       `json:"results,omitempty"`
	CreationDate   time.Time         `json:"creationDate,omitzero"`
	StartTime      time.Time         `json:"startTime,omitzero"`
	Duration       int64             `json:"duration,omitempty"`
	Timeout        int64             `json:"timeout,omitempty"`
	Attempt        int64             `json:"attempt,omitempty"`
	Labels         map[string]string `json:"labels,omitempty"`
	Annotations    map[string]any    `json:"annotations,omitempty"`
	// WorkflowRunChildRef is the child run a runworkflow task started.
	WorkflowRunChildRef string `json:"workflowRunChildRef,omitempty"`
}

// WorkflowRun is the contract's WorkflowRun: a run of a workflow version; it keeps a snapshot of the version it ran.
type WorkflowRun struct {
	ID                  string              `json:"id,omitempty"`
	WorkflowRef         string              `json:"workflowRef,omitempty"`
	WorkflowName        string              `json:"workflowName,omitempty"`
	WorkflowDisplayName string              `json:"workflowDisplayName,omitempty"`
	WorkflowVersion     int64               `json:"workflowVersion,omitempty"`
	Team                string              `json:"team,omitempty"`
	Status              string              `json:"status,omitempty"`
	Phase               string              `json:"phase,omitempty"`
	StatusMessage       string              `json:"statusMessage,omitempty"`
	Trigger             string              `json:"trigger,omitempty"`
	InitiatedBy         *RunInitiator       `json:"initiatedBy,omitempty"`
	InitiatedByRef      string              `json:"initiatedByRef,omitempty"`
	InitiatedByUserName string              `json:"initiatedByUserName,omitempty"`
	Labels              map[string]string   `json:"labels,omitempty"`
	Annotations         map[string]any      `json:"annotations,omitempty"`
	Params              []NameValue         `json:"params,omitempty"`
	Results             []NameValue         `json:"results,omitempty"`
	Workspaces          []WorkflowWorkspace `json:"workspaces,omitempty"`
	CreationDate        time.Time           `json:"creationDate,omitzero"`
	StartTime           time.Time           `json:"startTime,omitzero"`
	Duration            int64               `json:"duration,omitempty"`
	Timeout             int64               `json:"timeout,omitempty"`
	Retries             int64               `json:"retries,omitempty"`
	AwaitingApproval    bool                `json:"awaitingApproval,omitempty"`
	RetryOf             string              `json:"retryOf,omitempty"`
	ParentRun           string              `json:"parentRun,omitempty"`
	RootRun             string              `json:"rootRun,omitempty"`
	Depth               int64               `json:"depth,omitempty"`
	Tasks               []TaskRun           `json:"tasks,omitempty"`
}

// WorkflowSubmitRequest is the contract's WorkflowSubmitRequest: a `trigger` sent here is ignored.
type WorkflowSubmitRequest struct {
	Labels          map[string]string   `json:"labels,omitempty"`
	Annotations     map[string]any      `json:"annotations,omitempty"`
	Params          any                 `json:"params,omitempty"`
	Workspaces      []WorkflowWorkspace `json:"workspaces,omitempty"`
	Timeout         int64               `json:"timeout,omitempty"`
	Retries         int64               `json:"retries,omitempty"`
	Debug           bool                `json:"debug,omitempty"`
	WorkflowVersion int64               `json:"workflowVersion,omitempty"`
	IdempotencyKey  string              `json:"idempotencyKey,omitempty"`
}

// WorkflowRunInsight is the contract's WorkflowRunInsight.
type WorkflowRunInsight struct {
	TotalRuns      int64        `json:"totalRuns,omitempty"`
	ConcurrentRuns int64        `json:"concurrentRuns,omitempty"`
	TotalDuration  int64        `json:"totalDuration,omitempty"`
	MedianDuration int64        `json:"medianDuration,omitempty"`
	Runs           []InsightRun `json:"runs,omitempty"`
}

// WorkflowSchedule is the contract's WorkflowSchedule: a schedule of a team's workflow. Archived schedules are read-only.
type WorkflowSchedule struct {
	ID               string            `json:"id,omitempty"`
	Name             string            `json:"name,omitempty"`
	Description      string            `json:"description,omitempty"`
	WorkflowRef      string            `json:"workflowRef,omitempty"`
	Type             string            `json:"type,omitempty"`
	Status           string            `json:"status,omitempty"`
	TriggerDisabled  bool              `json:"triggerDisabled,omitempty"`
	CronSchedule     string            `json:"cronSchedule,omitempty"`
	DateSchedule     time.Time         `json:"dateSchedule,omitzero"`
	Timezone         string            `json:"timezone,omitempty"`
	Params           []NameValue       `json:"params,omitempty"`
	Labels           map[string]string `json:"labels,omitempty"`
	OverlapPolicy    string            `json:"overlapPolicy,omitempty"`
	MisfirePolicy    string            `json:"misfirePolicy,omitempty"`
	CatchupWindow    string            `json:"catchupWindow,omitempty"`
	NextScheduleDate time.Time         `json:"nextScheduleDate,omitzero"`
	LastScheduleDate time.Time         `json:"lastScheduleDate,omitzero"`
	CreationDate     time.Time         `json:"creationDate,omitzero"`
}

// WorkflowScheduleCalendar is the contract's WorkflowScheduleCalendar.
type WorkflowScheduleCalendar struct {
	ScheduleID string      `json:"scheduleId,omitempty"`
	Dates      []time.Time `json:"dates,omitempty"`
}

// CronValidationResponse is the contract's CronValidationResponse.
type CronValidationResponse struct {
	Valid     bool        `json:"valid,omitempty"`
	Message   string      `json:"message,omitempty"`
	NextDates []time.Time `json:"nextDates,omitempty"`
}

// Actioner is the contract's Actioner.
type Actioner struct {
	ApproverID    string    `json:"approverId,omitempty"`
	ApproverName  string    `json:"approverName,omitempty"`
	ApproverEmail string    `json:"approverEmail,omitempty"`
	Approved      bool      `json:"approved,omitempty"`
	Comments      string    `json:"comments,omitempty"`
	Date          time.Time `json:"date,omitzero"`
}

// Action is the contract's Action: an approval or manual step of a run waiting for a decision.
type Action struct {
	ID                string          `json:"id,omitempty"`
	Type              string          `json:"type,omitempty"`
	Status            string          `json:"status,omitempty"`
	Team              string          `json:"team,omitempty"`
	TeamName          string          `json:"teamName,omitempty"`
	WorkflowRef       string          `json:"workflowRef,omitempty"`
	WorkflowName      string          `json:"workflowName,omitempty"`
	WorkflowRunRef    string          `json:"workflowRunRef,omitempty"`
	TaskRunRef        string          `json:"taskRunRef,omitempty"`
	TaskName          string          `json:"taskName,omitempty"`
	Instructions      string          `json:"instructions,omitempty"`
	ApproverGroupRef  string          `json:"approverGroupRef,omitempty"`
	NumberOfApprovers int64           `json:"numberOfApprovers,omitempty"`
	ApprovalsRequired int64           `json:"approvalsRequired,omitempty"`
	NumberOfApprovals int64           `json:"numberOfApprovals,omitempty"`
	Actioners         []Actioner      `json:"actioners,omitempty"`
	Params            []AbstractParam `json:"params,omitempty"`
	Results           []NameValue     `json:"results,omitempty"`
	StatusMessage     string          `json:"statusMessage,omitempty"`
	CreationDate      time.Time       `json:"creationDate,omitzero"`
	DecisionDate      time.Time       `json:"decisionDate,omitzero"`
}

// ActionSummary is the contract's ActionSummary.
type ActionSummary struct {
	Approvals     int64 `json:"approvals,omitempty"`
	Manual        int64 `json:"manual,omitempty"`
	ApprovalsRate int64 `json:"approvalsRate,omitempty"`
}

// TeamMember is the contract's TeamMember.
type TeamMember struct {
	ID    string `json:"id,omitempty"`
	Email string `json:"email,omitempty"`
	Name  string `json:"name,omitempty"`
	Role  string `json:"role,omitempty"`
}

// ApproverGroup is the contract's ApproverGroup.
type ApproverGroup struct {
	ID        string       `json:"id,omitempty"`
	Name      string       `json:"name,omitempty"`
	Approvers []TeamMember `json:"approvers,omitempty"`
}

// Quotas is the contract's Quotas: a team's limits in force and, on a team, what it uses of them.
type Quotas struct {
	MaxWorkflowCount         int64     `json:"maxWorkflowCount,omitempty"`
	MaxWorkflowRunMonthly    int64     `json:"maxWorkflowRunMonthly,omitempty"`
	MaxWorkflowStorage       int64     `json:"maxWorkflowStorage,omitempty"`
	MaxWorkflowRunStorage    int64     `json:"maxWorkflowRunStorage,omitempty"`
	MaxWorkflowRunDuration   int64     `json:"maxWorkflowRunDuration,omitempty"`
	MaxConcurrentRuns        int64     `json:"maxConcurrentRuns,omitempty"`
	CurrentWorkflowCount     int64     `json:"currentWorkflowCount,omitempty"`
	CurrentRuns              int64     `json:"currentRuns,omitempty"`
	CurrentConcurrentRuns    int64     `json:"currentConcurrentRuns,omitempty"`
	CurrentRunTotalDuration  int64     `json:"currentRunTotalDuration,omitempty"`
	CurrentRunMedianDuration int64     `json:"currentRunMedianDuration,omitempty"`
	MonthlyResetDate         time.Time `json:"monthlyResetDate,omitzero"`
}

// Team is the contract's Team.
type Team struct {
	ID             string            `json:"id,omitempty"`
	Name           string            `json:"name,omitempty"`
	DisplayName    string            `json:"displayName,omitempty"`
	Status         string            `json:"status,omitempty"`
	CreationDate   time.Time         `json:"creationDate,omitzero"`
	Labels         map[string]string `json:"labels,omitempty"`
	ExternalRef    string            `json:"externalRef,omitempty"`
	Members        []TeamMember      `json:"members,omitempty"`
	ApproverGroups []ApproverGroup   `json:"approverGroups,omitempty"`
	Parameters     []AbstractParam   `json:"parameters,omitempty"`
	Quotas         *Quotas           `json:"quotas,omitempty"`
}

// TeamNameCheckRequest is the contract's TeamNameCheckRequest.
type TeamNameCheckRequest struct {
	Name string `json:"name,omitempty"`
}

// TeamNameCheckResponse is the contract's TeamNameCheckResponse.
type TeamNameCheckResponse struct {
	Name  string `json:"name,omitempty"`
	Valid bool   `json:"valid,omitempty"`
}

// TeamRole is the contract's TeamRole.
type TeamRole struct {
	Name        string   `json:"name,omitempty"`
	Description string   `json:"description,omitempty"`
	Permissions []string `json:"permissions,omitempty"`
}

// User is the contract's User: non-admins searching users see only `id`, `email`, `name` and `displayName`.
type User struct {
	ID            string            `json:"id,omitempty"`
	Email         string            `json:"email,omitempty"`
	Name          string            `json:"name,omitempty"`
	DisplayName   string            `json:"displayName,omitempty"`
	Type          string            `json:"type,omitempty"`
	Status        string            `json:"status,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	CreationDate  time.Time         `json:"creationDate,omitzero"`
	LastLoginDate time.Time         `json:"lastLoginDate,omitzero"`
}

// UserRequest is the contract's UserRequest: left-out and null fields are kept. `type`, `status` and `email` change only by an admin.
type UserRequest struct {
	Name        string            `json:"name,omitempty"`
	DisplayName string            `json:"displayName,omitempty"`
	Email       string            `json:"email,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Type        string            `json:"type,omitempty"`
	Status      string            `json:"status,omitempty"`
}

// TeamSummary is the contract's TeamSummary: one of the caller's teams, as v4's team summaries show it, with the caller's `role`
type TeamSummary struct {
	Name         string               `json:"name,omitempty"`
	DisplayName  string               `json:"displayName,omitempty"`
	CreationDate time.Time            `json:"creationDate,omitzero"`
	Status       string               `json:"status,omitempty"`
	ExternalRef  string               `json:"externalRef,omitempty"`
	Labels       map[string]string    `json:"labels,omitempty"`
	Role         string               `json:"role,omitempty"`
	Insights     *TeamSummaryInsights `json:"insights,omitempty"`
}

// TeamSummaryInsights is the contract's TeamSummaryInsights: what the team holds.
type TeamSummaryInsights struct {
	Workflows int64 `json:"workflows,omitempty"`
	Members   int64 `json:"members,omitempty"`
	Actions   int64 `json:"actions,omitempty"`
}

// Token is the contract's Token: a token, never its secret.
type Token struct {
	ID             string    `json:"id,omitempty"`
	Type           string    `json:"type,omitempty"`
	Name           string    `json:"name,omitempty"`
	Description    string    `json:"description,omitempty"`
	Principal      string    `json:"principal,omitempty"`
	Permissions    []string  `json:"permissions,omitempty"`
	CreationDate   time.Time `json:"creationDate,omitzero"`
	ExpirationDate time.Time `json:"expirationDate,omitzero"`
	Valid          bool      `json:"valid,omitempty"`
	CreatedBy      string    `json:"createdBy,omitempty"`
	LastUsed       time.Time `json:"lastUsed,omitzero"`
}

// TokenCreateRequest is the contract's TokenCreateRequest.
type TokenCreateRequest struct {
	Type        string `json:"type,omitempty"`
	Name        string `json:"name,omitempty"`
	Principal   string `json:"principal,omitempty"`
	Description string `json:"description,omitempty"`
	// ExpirationDate is a time.Time, an RFC 3339 string or date, or epoch milliseconds
	// (int64); nil never expires.
	ExpirationDate any      `json:"expirationDate,omitempty"`
	Permissions    []string `json:"permissions,omitempty"`
}

// TokenCreateResponse is the contract's TokenCreateResponse.
type TokenCreateResponse struct {
	ID             string    `json:"id,omitempty"`
	Type           string    `json:"type,omitempty"`
	Token          string    `json:"token,omitempty"`
	ExpirationDate time.Time `json:"expirationDate,omitzero"`
}

// SettingConfig is the contract's SettingConfig.
type SettingConfig struct {
	Key          string        `json:"key,omitempty"`
	Label        string        `json:"label,omitempty"`
	Description  string        `json:"description,omitempty"`
	Type         string        `json:"type,omitempty"`
	Value        string        `json:"value,omitempty"`
	DefaultValue string        `json:"defaultValue,omitempty"`
	Options      []ParamOption `json:"options,omitempty"`
	Required     bool          `json:"required,omitempty"`
}

// Setting is the contract's Setting.
type Setting struct {
	Key         string          `json:"key,omitempty"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Type        string          `json:"type,omitempty"`
	Config      []SettingConfig `json:"config,omitempty"`
}

// SettingRequest is the contract's SettingRequest.
type SettingRequest struct {
	Key    string         `json:"key"`
	Config []SettingValue `json:"config,omitempty"`
}

// SettingValue is a new value of one of a setting's config keys: a string, number,
// boolean or []string.
type SettingValue struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// Features is the contract's Features.
type Features struct {
	Features map[string]bool `json:"features,omitempty"`
}

// Navigation is the contract's Navigation: one entry of the web UI's navigation.
type Navigation struct {
	Name       string       `json:"name,omitempty"`
	Type       string       `json:"type,omitempty"`
	Icon       string       `json:"icon,omitempty"`
	Link       string       `json:"link,omitempty"`
	ChildLinks []Navigation `json:"childLinks,omitempty"`
	Disabled   bool         `json:"disabled,omitempty"`
	Beta       bool         `json:"beta,omitempty"`
}

// HeaderNavigationResponse is the contract's HeaderNavigationResponse.
type HeaderNavigationResponse struct {
	Platform        map[string]any   `json:"platform,omitempty"`
	Features        map[string]bool  `json:"features,omitempty"`
	Navigation      []Navigation     `json:"navigation,omitempty"`
	PlatformMessage *PlatformMessage `json:"platformMessage,omitempty"`
}

// OneTimeCode is the contract's OneTimeCode.
type OneTimeCode struct {
	OTC string `json:"otc"`
}

// CodeHostLinkRequest is the contract's CodeHostLinkRequest.
type CodeHostLinkRequest struct {
	InstallationID any    `json:"installationId"` // an int64, or a string of digits
	Team           string `json:"team,omitempty"`
}

// CodeHostInstallation is the contract's CodeHostInstallation.
type CodeHostInstallation struct {
	InstallationID int64    `json:"installationId,omitempty"`
	Team           string   `json:"team,omitempty"`
	Status         string   `json:"status,omitempty"`
	OrgSlug        string   `json:"orgSlug,omitempty"`
	OrgType        string   `json:"orgType,omitempty"`
	Repositories   []string `json:"repositories,omitempty"`
	Events         []string `json:"events,omitempty"`
}

// Integration is the contract's Integration.
type Integration struct {
	ID           string `json:"id,omitempty"`
	Name         string `json:"name,omitempty"`
	Description  string `json:"description,omitempty"`
	Icon         string `json:"icon,omitempty"`
	Status       string `json:"status,omitempty"`
	Ref          string `json:"ref,omitempty"`
	Instructions string `json:"instructions,omitempty"`
	Link         string `json:"link,omitempty"`
}

// CloudEvent is the contract's CloudEvent: a CloudEvents 1.0 event in structured mode.
type CloudEvent struct {
	SpecVersion     string    `json:"specversion,omitempty"`
	ID              string    `json:"id,omitempty"`
	Source          string    `json:"source,omitempty"`
	Type            string    `json:"type,omitempty"`
	Subject         string    `json:"subject,omitempty"`
	Time            time.Time `json:"time,omitzero"`
	DataContentType string    `json:"datacontenttype,omitempty"`
	Data            any       `json:"data,omitempty"`
}

// WebhookResult is the contract's WebhookResult.
type WebhookResult struct {
	Runs     []WorkflowRun `json:"runs,omitempty"`
	Refused  []RefusedRun  `json:"refused,omitempty"`
	Replayed bool          `json:"replayed,omitempty"`
}

// InsightRun is one run of an insight's window.
type InsightRun struct {
	ID           string    `json:"id"`
	CreationDate time.Time `json:"creationDate,omitzero"`
	Duration     int64     `json:"duration"`
	Status       string    `json:"status"`
	WorkflowRef  string    `json:"workflowRef"`
	WorkflowName string    `json:"workflowName"`
}

// RefusedRun is a run of a code-host delivery that the runs service refused: a quota, a
// workflow gone. Each refusal fails only its own run.
type RefusedRun struct {
	Team     string `json:"team,omitempty"`
	Workflow string `json:"workflow,omitempty"`
	Status   int    `json:"status,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Message  string `json:"message,omitempty"`
}

// CanvasPosition is where a node sits on the canvas.
type CanvasPosition struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}
