package events

import "encoding/json"

// TypeStatusAction is an action's creation or decision, published by the runs service on
// RunEvents keyed by its run's id, so notifications (a chat message to the approvers, a
// mail) can be built on it. Subject "/action/<id>/status/<status>"; id
// "<action id>/<status>", so a decision published again (a recovery) is dropped as a
// duplicate.
const TypeStatusAction = "io.baton.event.status.action"

// Action is the contract's Action (API.md §3): the data of TypeStatusAction, and what
// the actions API answers. Secret values of a manual form are masked.
type Action struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Status string `json:"status"`
	Team   string `json:"team"`
	// TeamName is Team again, under the name v4 clients read.
	TeamName       string `json:"teamName"`
	WorkflowRef    string `json:"workflowRef"`
	WorkflowName   string `json:"workflowName,omitempty"`
	WorkflowRunRef string `json:"workflowRunRef"`
	TaskRunRef     string `json:"taskRunRef"`
	TaskName       string `json:"taskName"`
	Instructions   string `json:"instructions,omitempty"`
	// ApproverGroupRef names the approver group whose members alone may vote.
	ApproverGroupRef string `json:"approverGroupRef,omitempty"`
	// NumberOfApprovers is how many approvals approve; NumberOfApprovals how many there are.
	NumberOfApprovers int `json:"numberOfApprovers"`
	// ApprovalsRequired is NumberOfApprovers again, under the name v4 clients read.
	ApprovalsRequired int        `json:"approvalsRequired"`
	NumberOfApprovals int        `json:"numberOfApprovals"`
	Actioners         []Actioner `json:"actioners"`
	// Params is a manual action's form (AbstractParam definitions); Results the values it
	// was completed with.
	Params  json.RawMessage `json:"params,omitempty"`
	Results []NameValue     `json:"results,omitempty"`
	// StatusMessage says why an action nobody decided was closed (a timeout, a cancel).
	StatusMessage string `json:"statusMessage,omitempty"`
	// CreationDate and DecisionDate are in TimeFormat.
	CreationDate string `json:"creationDate"`
	DecisionDate string `json:"decisionDate,omitempty"`
}

// Actioner is one person's decision on an action.
type Actioner struct {
	ApproverID    string `json:"approverId"`
	ApproverName  string `json:"approverName,omitempty"`
	ApproverEmail string `json:"approverEmail,omitempty"`
	Approved      bool   `json:"approved"`
	Comments      string `json:"comments,omitempty"`
	// Date is in TimeFormat.
	Date string `json:"date"`
}
