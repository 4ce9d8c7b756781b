package client

import "github.com/baton-flow/baton/libs/page"

// The contract's schemas whose shape the generic rules of models.go do not fit: requests
// where false or zero must be sent, nullable fields, the page envelope, and the schemas
// made of others (allOf).

// Trigger is the contract's Trigger: whether a kind of trigger may start runs, and on
// what conditions. Enabled is a pointer so that false is sent (the manual trigger is on
// unless disabled).
type Trigger struct {
	Enabled    *bool              `json:"enabled,omitempty"`
	Conditions []TriggerCondition `json:"conditions,omitempty"`
}

// ActionRequest is one decision of DecideActions: approve (or complete a manual action)
// or reject action ID.
type ActionRequest struct {
	ID       string `json:"id"`
	Approved bool   `json:"approved"`
	Comments string `json:"comments,omitempty"`
	// Params completes a manual action's form: []NameValue or map[string]any.
	Params any `json:"params,omitempty"`
}

// WorkflowRunRequest is the body of StartWorkflowRun and RetryWorkflowRun: what is
// merged into the run. Params is []NameValue or map[string]any.
type WorkflowRunRequest struct {
	Labels      map[string]string   `json:"labels,omitempty"`
	Annotations map[string]any      `json:"annotations,omitempty"`
	Params      any                 `json:"params,omitempty"`
	Workspaces  []WorkflowWorkspace `json:"workspaces,omitempty"`
	// FromFailure (retry only, default true) keeps the results of the tasks that
	// succeeded and does not run them again.
	FromFailure *bool `json:"fromFailure,omitempty"`
}

// TeamRequest is the body of CreateTeam and UpdateTeam; fields left out are kept.
type TeamRequest struct {
	Name        string `json:"name,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
	Status      string `json:"status,omitempty"`
	// Labels are merged; a nil value removes the key.
	Labels         map[string]*string     `json:"labels,omitempty"`
	ExternalRef    string                 `json:"externalRef,omitempty"`
	Members        []TeamMemberRequest    `json:"members,omitempty"`
	ApproverGroups []ApproverGroupRequest `json:"approverGroups,omitempty"`
	Parameters     []AbstractParam        `json:"parameters,omitempty"`
	Quotas         *QuotasRequest         `json:"quotas,omitempty"`
}

// TeamMemberRequest adds a member, or changes a member's role: by ID or by Email (an
// unknown email creates a pending user).
type TeamMemberRequest struct {
	ID    string `json:"id,omitempty"`
	Email string `json:"email,omitempty"`
	Role  string `json:"role"`
}

// ApproverGroupRequest upserts an approver group by name; each approver is a member's id
// or email. Nil Approvers keeps the group's.
type ApproverGroupRequest struct {
	Name      string   `json:"name"`
	Approvers []string `json:"approvers,omitempty"`
}

// MemberRef names a user by ID or Email, as RemoveTeamMembers takes them.
type MemberRef struct {
	ID    string `json:"id,omitempty"`
	Email string `json:"email,omitempty"`
}

// QuotasRequest overrides a team's limits (admins only); nil fields keep theirs.
type QuotasRequest struct {
	MaxWorkflowCount       *int64 `json:"maxWorkflowCount,omitempty"`
	MaxWorkflowRunMonthly  *int64 `json:"maxWorkflowRunMonthly,omitempty"`
	MaxWorkflowStorage     *int64 `json:"maxWorkflowStorage,omitempty"`
	MaxWorkflowRunStorage  *int64 `json:"maxWorkflowRunStorage,omitempty"`
	MaxWorkflowRunDuration *int64 `json:"maxWorkflowRunDuration,omitempty"`
	MaxConcurrentRuns      *int64 `json:"maxConcurrentRuns,omitempty"`
}

// WorkflowRunCount is the number of a team's runs by status; the key "all" counts every
// run.
type WorkflowRunCount struct {
	Status map[string]int64 `json:"status"`
}

// EnvVar is an environment variable of a task's spec.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
}

// PlatformMessage is a message the web UI shows on every page.
type PlatformMessage struct {
	Kind    string `json:"kind,omitempty"`
	Title   string `json:"title,omitempty"`
	Message string `json:"message,omitempty"`
}

// UserProfile is the caller: the user (or, for a token, what principal it is), its teams
// and its permissions.
type UserProfile struct {
	User
	PrincipalType string        `json:"principalType,omitempty"`
	Teams         []TeamSummary `json:"teams,omitempty"`
	Permissions   []string      `json:"permissions,omitempty"`
}

// WorkflowCanvas is the designer's model of a workflow: its fields with params named
// Config, and tasks as Nodes and Edges.
type WorkflowCanvas struct {
	Workflow
	Config []AbstractParam `json:"config,omitempty"`
	Nodes  []CanvasNode    `json:"nodes,omitempty"`
	Edges  []CanvasEdge    `json:"edges,omitempty"`
}

// Page is one page of a search, the contract's page envelope: Content and where it is
// among the rest. TotalElements is exact.
type Page[T any] = page.Page[T]

// PageSort says whether a page is sorted.
type PageSort = page.SortInfo

// Pageable is the request a page answers, repeated in its envelope.
type Pageable = page.Pageable

// Statuses of runs and task runs.
const (
	StatusNotStarted = "notstarted"
	StatusReady      = "ready"
	StatusRunning    = "running"
	StatusWaiting    = "waiting"
	StatusSucceeded  = "succeeded"
	StatusFailed     = "failed"
	StatusInvalid    = "invalid"
	StatusSkipped    = "skipped"
	StatusCancelled  = "cancelled"
	StatusTimedOut   = "timedout"
)

// Phases of runs and task runs.
const (
	PhasePending   = "pending"
	PhaseQueued    = "queued"
	PhaseRunning   = "running"
	PhaseCompleted = "completed"
	PhaseFinalized = "finalized"
)

// Ended reports whether the run has ended: its phase is completed or finalized.
func (r *WorkflowRun) Ended() bool {
	return r.Phase == PhaseCompleted || r.Phase == PhaseFinalized
}

// Ended reports whether the task run has ended.
func (t *TaskRun) Ended() bool {
	return t.Phase == PhaseCompleted || t.Phase == PhaseFinalized
}

// Task answers the run's task run named name, if the run was read with its tasks.
func (r *WorkflowRun) Task(name string) (*TaskRun, bool) {
	for i := range r.Tasks {
		if r.Tasks[i].Name == name {
			return &r.Tasks[i], true
		}
	}
	return nil, false
}
