package workflowsapi

import (
	"encoding/json"

	"github.com/baton-flow/baton/libs/param"
)

// RunnableVersion is the part of a WorkflowVersion that a run is made of, read from the
// same answer: what the runs service reads of it, and nothing else. The members it does
// not name are skipped, not kept, so reading a workflow of thousands of tasks costs one
// plain decode (WorkflowVersion keeps every member, for a reader that writes the document
// back).
type RunnableVersion struct {
	Name        string          `json:"name"`
	DisplayName string          `json:"displayName,omitempty"`
	Team        string          `json:"team,omitempty"`
	Status      string          `json:"status,omitempty"`
	Version     int             `json:"version,omitempty"`
	Timeout     *int            `json:"timeout,omitempty"`
	Retries     *int            `json:"retries,omitempty"`
	Params      []param.Param   `json:"params,omitempty"`
	Workspaces  json.RawMessage `json:"workspaces,omitempty"`
	// Triggers says which triggers are on, by name: those WorkflowVersion names and any
	// other the document holds.
	Triggers map[string]RunnableTrigger `json:"triggers,omitempty"`
	Tasks    []RunnableTask             `json:"tasks,omitempty"`
}

// RunnableTrigger is whether one trigger is on.
type RunnableTrigger struct {
	Enabled bool `json:"enabled"`
}

// RunnableTask is the part of a Task a run runs.
type RunnableTask struct {
	Name         string               `json:"name"`
	Type         string               `json:"type"`
	TaskRef      string               `json:"taskRef,omitempty"`
	TaskVersion  *int                 `json:"taskVersion,omitempty"`
	Timeout      *int                 `json:"timeout,omitempty"`
	Retries      *int                 `json:"retries,omitempty"`
	RetryDelay   *int                 `json:"retryDelay,omitempty"`
	Join         string               `json:"join,omitempty"`
	Dependencies []RunnableDependency `json:"dependencies,omitempty"`
	Params       []TaskParam          `json:"params,omitempty"`
	Results      json.RawMessage      `json:"results,omitempty"`
	Labels       map[string]string    `json:"labels,omitempty"`
}

// RunnableDependency is an edge of the DAG, as a run follows it.
type RunnableDependency struct {
	TaskRef            string `json:"taskRef"`
	ExecutionCondition string `json:"executionCondition,omitempty"`
	DecisionCondition  string `json:"decisionCondition,omitempty"`
}
