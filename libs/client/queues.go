package client

import (
	"context"
	"net/http"
	"time"
)

// The workers' endpoints: a worker of `generic` tasks claims its team's queue's oldest
// attempt, beats for it, writes its log and ends it. Package client/worker runs a worker
// on them; these are the calls themselves.

// ClaimRequest is a worker's claim: its name (one per concurrent claim), and how long to
// wait for an attempt, at most 60 s.
type ClaimRequest struct {
	Worker      string `json:"worker"`
	WaitSeconds int    `json:"waitSeconds,omitempty"`
}

// WorkerRequest names the worker speaking for an attempt.
type WorkerRequest struct {
	Worker string `json:"worker"`
}

// WorkerAttempt is an attempt a worker claimed: what to do (Params, resolved, secrets in
// clear), which results to give back, which values to mask in its log, and how often to
// beat (HeartbeatSeconds) before a silence of LeaseSeconds loses it.
type WorkerAttempt struct {
	ID               string         `json:"id"`
	TaskRunID        string         `json:"taskRunId"`
	RunID            string         `json:"runId"`
	Team             string         `json:"team"`
	Workflow         string         `json:"workflow"`
	Queue            string         `json:"queue"`
	Name             string         `json:"name"`
	Attempt          int            `json:"attempt"`
	Deadline         *time.Time     `json:"deadline,omitempty"`
	Params           map[string]any `json:"params"`
	Results          []string       `json:"results"`
	Secrets          []string       `json:"secrets"`
	HeartbeatSeconds int            `json:"heartbeatSeconds"`
	LeaseSeconds     int            `json:"leaseSeconds"`
}

// HeartbeatAnswer says whether the worker is to stop (its run or task was cancelled, or
// it timed out).
type HeartbeatAnswer struct {
	Cancel bool `json:"cancel"`
}

// AttemptLog is a chunk of an attempt's log, numbered from 0.
type AttemptLog struct {
	Worker string `json:"worker"`
	Seq    int    `json:"seq"`
	Text   string `json:"text"`
}

// AttemptEnd ends an attempt: StatusSucceeded with Results, or failed or cancelled with a
// Message. ClaimNext asks, in the same call, for the worker's next attempt, waiting up to
// WaitSeconds for one (EndAttemptAndClaim).
type AttemptEnd struct {
	Worker      string            `json:"worker"`
	Status      string            `json:"status"`
	Message     string            `json:"message,omitempty"`
	Results     map[string]string `json:"results,omitempty"`
	ClaimNext   bool              `json:"claimNext,omitempty"`
	WaitSeconds int               `json:"waitSeconds,omitempty"`
}

// ClaimQueuedAttempt claims the oldest attempt waiting in queue of team for req.Worker,
// waiting up to req.WaitSeconds for one; nil when none came.
func (c *Client) ClaimQueuedAttempt(ctx context.Context, team, queue string, req *ClaimRequest) (*WorkerAttempt, error) {
	var out WorkerAttempt
	status, err := c.call(ctx, http.MethodPost, p("team", team, "queue", queue, "claim"), nil, req, &out)
	if err != nil || status == http.StatusNoContent {
		return nil, err
	}
	return &out, nil
}

// HeartbeatAttempt says worker still works attempt id; a 409 *Error (IsConflict) means the
// attempt is not the worker's any more.
func (c *Client) HeartbeatAttempt(ctx context.Context, team, queue, id string, req *WorkerRequest) (*HeartbeatAnswer, error) {
	var out HeartbeatAnswer
	if _, err := c.call(ctx, http.MethodPost, p("team", team, "queue", queue, "attempt", id, "heartbeat"), nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AppendAttemptLog writes a chunk of attempt id's log.
func (c *Client) AppendAttemptLog(ctx context.Context, team, queue, id string, req *AttemptLog) error {
	_, err := c.call(ctx, http.MethodPost, p("team", team, "queue", queue, "attempt", id, "log"), nil, req, nil)
	return err
}

// EndAttempt ends attempt id; an end said again is taken again.
func (c *Client) EndAttempt(ctx context.Context, team, queue, id string, req *AttemptEnd) error {
	_, err := c.call(ctx, http.MethodPost, p("team", team, "queue", queue, "attempt", id, "end"), nil, req, nil)
	return err
}

// EndAttemptAndClaim ends attempt id as EndAttempt does and claims for req.Worker, in the
// same call, the queue's oldest attempt waiting, waiting up to req.WaitSeconds for one as
// ClaimQueuedAttempt does: nil when none came. A worker that ends each attempt this way
// makes one call per attempt instead of two.
func (c *Client) EndAttemptAndClaim(ctx context.Context, team, queue, id string, req *AttemptEnd) (*WorkerAttempt, error) {
	end := *req
	end.ClaimNext = true
	var out WorkerAttempt
	status, err := c.call(ctx, http.MethodPost, p("team", team, "queue", queue, "attempt", id, "end"), nil, &end, &out)
	if err != nil || status == http.StatusNoContent {
		return nil, err
	}
	return &out, nil
}

// ReleaseAttempt gives attempt id back to its queue, unworked: another claim takes it, and
// it counts as no try.
func (c *Client) ReleaseAttempt(ctx context.Context, team, queue, id string, req *WorkerRequest) error {
	_, err := c.call(ctx, http.MethodPost, p("team", team, "queue", queue, "attempt", id, "release"), nil, req, nil)
	return err
}
