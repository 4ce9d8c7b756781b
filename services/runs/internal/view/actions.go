package view

import (
	"encoding/json"
	"slices"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Action is the contract's Action, declared once with the event that carries it.
type Action = events.Action

// OfAction renders an action, the values of password fields masked.
func OfAction(a *domain.Action) Action {
	v := Action{
		ID: domain.PublicActionID(a.ID), Type: string(a.Type), Status: string(a.Status), Team: a.Team, TeamName: a.Team, WorkflowRef: a.Workflow,
		WorkflowName: a.WorkflowName, WorkflowRunRef: a.RunID, TaskRunRef: a.TaskRunID, TaskName: a.TaskName,
		Instructions: a.Instructions, ApproverGroupRef: a.ApproverGroup, NumberOfApprovers: a.Required,
		ApprovalsRequired: a.Required, NumberOfApprovals: a.Approvals(), Actioners: make([]events.Actioner, len(a.Actioners)),
		Results:       nameValues(maskValues(a.Values, a.SecretValues, nil)),
		StatusMessage: a.Reason, CreationDate: fmtTime(a.CreationDate), DecisionDate: fmtTime(a.DecidedAt),
	}
	for i, x := range a.Actioners {
		v.Actioners[i] = events.Actioner{ApproverID: x.ID, ApproverName: x.Name, ApproverEmail: x.Email,
			Approved: x.Approved, Comments: x.Comments, Date: fmtTime(x.Date)}
	}
	if len(a.Form) > 0 {
		form := slices.Clone(a.Form)
		for i, p := range form {
			if p.Type == "password" {
				form[i].Default, form[i].Value = maskRaw(p.Default), maskRaw(p.Value)
			}
		}
		v.Params, _ = json.Marshal(form)
	}
	if len(v.Results) == 0 {
		v.Results = nil
	}
	return v
}

// maskRaw is a JSON value masked, or nothing when there is none.
func maskRaw(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return raw
	}
	return json.RawMessage(`"` + mask + `"`)
}
