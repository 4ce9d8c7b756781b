package events

import "time"

// Workflow event types, published by the workflows service on WorkflowEvents with the key
// "<team>/<workflow>", so one workflow's events stay in order.
const (
	// TypeWorkflowSaved is a workflow created, given a new version or having its latest
	// version replaced; data is WorkflowSaved. Subject: "/team/<team>/workflow/<name>".
	TypeWorkflowSaved = "io.baton.workflow.saved"
	// TypeWorkflowDeleted is a workflow being deleted; data is WorkflowDeleted. Schedules
	// are to archive theirs and identity to revoke its workflow tokens on it (nothing
	// consumes it yet).
	TypeWorkflowDeleted = "io.baton.workflow.deleted"
)

// WorkflowSaved is the data of TypeWorkflowSaved. It carries what other services react to
// (status and triggers), not the definition: they ask the workflows service for that.
type WorkflowSaved struct {
	Team    string `json:"team"`
	Name    string `json:"name"`
	Version int    `json:"version"`
	// Created is set on the save that created the workflow (version 1).
	Created bool `json:"created,omitempty"`
	// Replaced is set when the save overwrote Version in place instead of adding it.
	Replaced    bool             `json:"replaced,omitempty"`
	DisplayName string           `json:"displayName,omitempty"`
	Status      string           `json:"status"`
	Triggers    WorkflowTriggers `json:"triggers"`
	// Author names the principal who saved it.
	Author string    `json:"author,omitempty"`
	Date   time.Time `json:"date"`
}

// WorkflowTriggers says which triggers of a workflow's latest version are enabled.
type WorkflowTriggers struct {
	Manual   bool `json:"manual"`
	Schedule bool `json:"schedule"`
	Webhook  bool `json:"webhook"`
	Event    bool `json:"event"`
	Codehost bool `json:"codehost"`
}

// WorkflowDeleted is the data of TypeWorkflowDeleted.
type WorkflowDeleted struct {
	Team string `json:"team"`
	Name string `json:"name"`
	// Version is the latest version the workflow had.
	Version int       `json:"version"`
	Date    time.Time `json:"date"`
}
