// Package mongostore keeps runs, task runs, logs, actions, locks and the engine's
// bookkeeping in the runs service's MongoDB database. Every state change is conditional on
// a document's version: a write on it, or for actions an insert claiming the next one (see
// actions.go); the engine's lookups go by _id, the only lookup FerretDB answers without a
// scan.
package mongostore

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/klauspost/compress/zstd"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Values with client-chosen keys (params, results, annotations) are kept as JSON text:
// their keys may hold dots or dollars, which field names may not.

type runDoc struct {
	ID                  string           `bson:"_id"`
	Team                string           `bson:"team"`
	Workflow            string           `bson:"workflow"`
	WorkflowDisplayName string           `bson:"workflowDisplayName,omitempty"`
	WorkflowVersion     int              `bson:"workflowVersion"`
	Status              string           `bson:"status"`
	Phase               string           `bson:"phase"`
	StatusMessage       string           `bson:"statusMessage,omitempty"`
	Trigger             string           `bson:"trigger"`
	InitiatedBy         domain.Initiator `bson:"initiatedBy"`
	Labels              string           `bson:"labels,omitempty"`
	LabelPairs          []string         `bson:"labelPairs,omitempty"`
	Annotations         string           `bson:"annotations,omitempty"`
	Params              string           `bson:"params,omitempty"`
	Results             string           `bson:"results,omitempty"`
	Workspaces          string           `bson:"workspaces,omitempty"`
	CreationDate        time.Time        `bson:"creationDate"`
	StartTime           time.Time        `bson:"startTime,omitempty"`
	EndTime             time.Time        `bson:"endTime,omitempty"`
	// Duration is the run's once it has ended (ms), stored so that insights sum and rank
	// runs in the database; 0 until then.
	Duration           int64     `bson:"duration"`
	Timeout            int       `bson:"timeout"`
	Deadline           time.Time `bson:"deadline,omitempty"`
	Retries            int       `bson:"retries,omitempty"`
	Debug              bool      `bson:"debug,omitempty"`
	RetryOf            string    `bson:"retryOf,omitempty"`
	ParentRun          string    `bson:"parentRun,omitempty"`
	ParentTask         string    `bson:"parentTask,omitempty"`
	Ancestors          []string  `bson:"ancestors,omitempty"`
	Depth              int       `bson:"depth,omitempty"`
	SharesSlot         bool      `bson:"sharesSlot,omitempty"`
	FinalStatus        string    `bson:"finalStatus,omitempty"`
	Context            string    `bson:"context,omitempty"`
	TaskDefaultTimeout int       `bson:"taskDefaultTimeout,omitempty"`
	SecretParams       []string  `bson:"secretParams,omitempty"`
	SecretResults      []string  `bson:"secretResults,omitempty"`
	// Owner and Queued are set while the run is in flight (in the live collection).
	Owner  string `bson:"owner,omitempty"`
	Queued bool   `bson:"queued,omitempty"`
	// WakeAt is Run.WakeAt, kept while the run is in flight.
	WakeAt time.Time `bson:"wakeAt,omitempty"`
	// AwaitingApproval and Callbacks are the run's gates' (Run.AwaitingApproval,
	// Run.Callbacks as JSON: topics are free text, which field names may not be).
	AwaitingApproval bool   `bson:"awaitingApproval,omitempty"`
	Callbacks        string `bson:"callbacks,omitempty"`
	// DefinitionID is the _id of the run's definition in definitions.
	DefinitionID string `bson:"definitionId,omitempty"`
	Tasks        int    `bson:"tasks"`
	Version      int64  `bson:"version"`
	// EventSeq and Owed are Run.EventSeq and Run.Owed; OwedAt, on a run put away that
	// still owes events, is when they were last sent (its end, then each time again).
	EventSeq int64     `bson:"eventSeq,omitempty"`
	Owed     []owedDoc `bson:"owed,omitempty"`
	OwedAt   time.Time `bson:"owedAt,omitempty"`
}

// owedDoc is a domain.OwedEvent.
type owedDoc struct {
	Seq  int64  `bson:"s"`
	Body []byte `bson:"b"`
}

func toOwedDocs(owed []domain.OwedEvent) []owedDoc {
	if len(owed) == 0 {
		return nil
	}
	out := make([]owedDoc, len(owed))
	for i, o := range owed {
		out[i] = owedDoc{Seq: o.Seq, Body: o.Body}
	}
	return out
}

func fromOwedDocs(owed []owedDoc) []domain.OwedEvent {
	if len(owed) == 0 {
		return nil
	}
	out := make([]domain.OwedEvent, len(owed))
	for i, o := range owed {
		out[i] = domain.OwedEvent{Seq: o.Seq, Body: o.Body}
	}
	return out
}

// pageDoc holds up to PageSize task runs of one run: a step rewrites the pages of the tasks
// it moved, not one document per task. The task runs are stored packed (packedTasks):
// nothing queries inside a page.
type pageDoc struct {
	ID      string      `bson:"_id"`
	RunID   string      `bson:"runId"`
	Version int64       `bson:"version"`
	Packed  packedTasks `bson:"packed,omitempty"`
	// Tasks are the task runs of a page written before they were packed.
	Tasks []taskDoc `bson:"tasks,omitempty"`
}

// taskDocs are the page's task runs, packed or not.
func (d pageDoc) taskDocs() []taskDoc {
	if d.Packed != nil {
		return d.Packed
	}
	return d.Tasks
}

// packedTasks are a page's task runs stored as one binary value: zstd-compressed BSON.
// The embedded FerretDB spends its time on each field of a document it reads or writes (a
// page of 60 task runs took 13 ms to replace and 11 ms to read as fields; 3.1 and 1.0 ms
// packed), and every step of a run rewrites a page.
type packedTasks []taskDoc

// packedPage is what packedTasks compresses.
type packedPage struct {
	Tasks []taskDoc `bson:"t"`
}

var (
	packer, _   = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	unpacker, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0))
)

// MarshalBSONValue implements bson.ValueMarshaler.
func (p packedTasks) MarshalBSONValue() (byte, []byte, error) {
	raw, err := bson.Marshal(packedPage{Tasks: p})
	if err != nil {
		return 0, nil, fmt.Errorf("pack task runs: %w", err)
	}
	typ, data, err := bson.MarshalValue(packer.EncodeAll(raw, nil))
	return byte(typ), data, err
}

// UnmarshalBSONValue implements bson.ValueUnmarshaler.
func (p *packedTasks) UnmarshalBSONValue(typ byte, data []byte) error {
	var packed []byte
	if err := bson.UnmarshalValue(bson.Type(typ), data, &packed); err != nil {
		return fmt.Errorf("packed task runs: %w", err)
	}
	raw, err := unpacker.DecodeAll(packed, nil)
	if err != nil {
		return fmt.Errorf("unpack task runs: %w", err)
	}
	var page packedPage
	if err := bson.Unmarshal(raw, &page); err != nil {
		return fmt.Errorf("unpack task runs: %w", err)
	}
	*p = page.Tasks
	return nil
}

type taskDoc struct {
	ID            string    `bson:"id"`
	RunID         string    `bson:"runId"`
	Index         int       `bson:"index"`
	Name          string    `bson:"name"`
	Type          string    `bson:"type"`
	Status        string    `bson:"status"`
	StatusMessage string    `bson:"statusMessage,omitempty"`
	TaskRef       string    `bson:"taskRef,omitempty"`
	TaskVersion   int       `bson:"taskVersion,omitempty"`
	Params        string    `bson:"params,omitempty"`
	Results       string    `bson:"results,omitempty"`
	CreationDate  time.Time `bson:"creationDate"`
	StartTime     time.Time `bson:"startTime,omitempty"`
	EndTime       time.Time `bson:"endTime,omitempty"`
	Timeout       int       `bson:"timeout,omitempty"`
	Attempt       int       `bson:"attempt,omitempty"`
	Deadline      time.Time `bson:"deadline,omitempty"`
	WakeAt        time.Time `bson:"wakeAt,omitempty"`
	Runner        string    `bson:"runner,omitempty"`
	Heartbeat     time.Time `bson:"heartbeat,omitempty"`
	Decision      string    `bson:"decision,omitempty"`
	Child         string    `bson:"child,omitempty"`
	Kept          bool      `bson:"kept,omitempty"`
	SecretParams  []string  `bson:"secretParams,omitempty"`
	SecretResults []string  `bson:"secretResults,omitempty"`
	Labels        string    `bson:"labels,omitempty"`
	Version       int64     `bson:"-"`
	EventSeq      int64     `bson:"eventSeq,omitempty"`
	Owed          []owedDoc `bson:"owed,omitempty"`
}

func jsonText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case map[string]any:
		if len(x) == 0 {
			return ""
		}
	case map[string]string:
		if len(x) == 0 {
			return ""
		}
	case json.RawMessage:
		return string(x)
	}
	b, _ := json.Marshal(v)
	if s := string(b); s != "null" && s != "{}" {
		return s
	}
	// Nothing to keep (a nil map, an empty struct): read back as the zero value, as "" is.
	return ""
}

func fromText[T any](s string) T {
	var v T
	if s != "" {
		_ = json.Unmarshal([]byte(s), &v)
	}
	return v
}

func labelPairs(labels map[string]string) []string {
	out := make([]string, 0, len(labels))
	for k, v := range labels {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func toRunDoc(r *domain.Run, box Sealer) runDoc {
	return runDoc{
		ID: r.ID, Team: r.Team, Workflow: r.Workflow, WorkflowDisplayName: r.WorkflowDisplayName,
		WorkflowVersion: r.WorkflowVersion, Status: string(r.Status), Phase: string(r.Phase), StatusMessage: r.StatusMessage,
		Trigger: r.Trigger, InitiatedBy: r.InitiatedBy, Labels: jsonText(r.Labels), LabelPairs: labelPairs(r.Labels),
		Annotations: jsonText(r.Annotations), Params: jsonText(sealValues(box, r.Params, r.SecretParams)),
		Results:    jsonText(sealValues(box, r.Results, r.SecretResults)),
		Workspaces: string(r.Workspaces), CreationDate: r.CreationDate, StartTime: r.StartTime, EndTime: r.EndTime,
		Timeout: r.Timeout, Deadline: r.Deadline, Retries: r.Retries, Debug: r.Debug, RetryOf: r.RetryOf,
		ParentRun: r.ParentRun, ParentTask: r.ParentTask, Ancestors: r.Ancestors, Depth: r.Depth, SharesSlot: r.SharesSlot,
		FinalStatus: string(r.FinalStatus), Context: jsonText(sealContext(box, r.Context)),
		TaskDefaultTimeout: r.TaskDefaultTimeout, SecretParams: r.SecretParams, SecretResults: r.SecretResults, Tasks: r.Tasks, Version: r.Version,
		Owner: r.Owner, Queued: r.Queued, DefinitionID: r.DefinitionID, Duration: endedDuration(r),
		WakeAt: r.WakeAt, AwaitingApproval: r.AwaitingApproval, Callbacks: jsonText(r.Callbacks),
		EventSeq: r.EventSeq, Owed: toOwedDocs(r.Owed), OwedAt: owedAt(r),
	}
}

// owedAt is when a run put away that owes events (no owner) last sent them: at its end.
func owedAt(r *domain.Run) time.Time {
	if r.Owner != "" || len(r.Owed) == 0 {
		return time.Time{}
	}
	return r.EndTime
}

// endedDuration is r's duration once it has ended, from its times as stored (to the
// millisecond), so that it equals the duration the stored run shows.
func endedDuration(r *domain.Run) int64 {
	if r.EndTime.IsZero() {
		return 0
	}
	stored := domain.Run{StartTime: toMillis(r.StartTime), EndTime: toMillis(r.EndTime)}
	return stored.Duration(stored.EndTime)
}

func toMillis(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return time.UnixMilli(t.UnixMilli())
}

func (d runDoc) run(box Sealer) *domain.Run {
	r := &domain.Run{
		ID: d.ID, Team: d.Team, Workflow: d.Workflow, WorkflowDisplayName: d.WorkflowDisplayName,
		WorkflowVersion: d.WorkflowVersion, Status: domain.Status(d.Status), Phase: domain.Phase(d.Phase),
		StatusMessage: d.StatusMessage, Trigger: d.Trigger, InitiatedBy: d.InitiatedBy,
		Labels: fromText[map[string]string](d.Labels), Annotations: fromText[map[string]any](d.Annotations),
		Params:       openValues(box, fromText[map[string]any](d.Params), d.SecretParams),
		Results:      openValues(box, fromText[map[string]any](d.Results), d.SecretResults),
		CreationDate: d.CreationDate.UTC(), StartTime: utc(d.StartTime), EndTime: utc(d.EndTime), Timeout: d.Timeout,
		Deadline: utc(d.Deadline), Retries: d.Retries, Debug: d.Debug, RetryOf: d.RetryOf, ParentRun: d.ParentRun,
		ParentTask: d.ParentTask, Ancestors: d.Ancestors, Depth: d.Depth, SharesSlot: d.SharesSlot,
		FinalStatus: domain.Status(d.FinalStatus), Context: openContext(box, fromText[domain.RunContext](d.Context)),
		TaskDefaultTimeout: d.TaskDefaultTimeout, SecretParams: d.SecretParams, SecretResults: d.SecretResults, Tasks: d.Tasks, Version: d.Version,
		Owner: d.Owner, Queued: d.Queued, DefinitionID: d.DefinitionID,
		WakeAt: utc(d.WakeAt), AwaitingApproval: d.AwaitingApproval, Callbacks: fromText[map[string]domain.Callback](d.Callbacks),
		EventSeq: d.EventSeq, Owed: fromOwedDocs(d.Owed),
	}
	if d.Workspaces != "" {
		r.Workspaces = json.RawMessage(d.Workspaces)
	}
	return r
}

func utc(t time.Time) time.Time {
	if t.IsZero() || t.Unix() <= 0 {
		return time.Time{}
	}
	return t.UTC()
}

func toTaskDoc(t *domain.TaskRun, box Sealer) taskDoc {
	decision := t.Decision
	if t.SecretDecision() {
		decision = seal(box, decision)
	}
	return taskDoc{
		ID: t.ID, RunID: t.RunID, Index: t.Index, Name: t.Name, Type: t.Type, Status: string(t.Status),
		StatusMessage: t.StatusMessage, TaskRef: t.TaskRef, TaskVersion: t.TaskVersion,
		Params: jsonText(sealValues(box, t.Params, t.SecretParams)), Results: jsonText(sealTexts(box, t.Results, t.SecretResults)),
		CreationDate: t.CreationDate, StartTime: t.StartTime, EndTime: t.EndTime,
		Timeout: t.Timeout, Attempt: t.Attempt, Deadline: t.Deadline, WakeAt: t.WakeAt, Runner: t.Runner,
		Heartbeat: t.Heartbeat, Decision: decision, Child: t.Child, Kept: t.Kept,
		SecretParams: t.SecretParams, SecretResults: t.SecretResults, Labels: jsonText(t.Labels),
		Version: t.Version, EventSeq: t.EventSeq, Owed: toOwedDocs(t.Owed),
	}
}

func (d taskDoc) task(box Sealer) *domain.TaskRun {
	return &domain.TaskRun{
		ID: d.ID, RunID: d.RunID, Index: d.Index, Name: d.Name, Type: d.Type, Status: domain.Status(d.Status),
		StatusMessage: d.StatusMessage, TaskRef: d.TaskRef, TaskVersion: d.TaskVersion,
		Params:       openValues(box, fromText[map[string]any](d.Params), d.SecretParams),
		Results:      openTexts(box, fromText[map[string]string](d.Results), d.SecretResults),
		CreationDate: d.CreationDate.UTC(), StartTime: utc(d.StartTime), EndTime: utc(d.EndTime), Timeout: d.Timeout,
		Attempt: d.Attempt, Deadline: utc(d.Deadline), WakeAt: utc(d.WakeAt), Runner: d.Runner,
		Heartbeat: utc(d.Heartbeat), Decision: open(box, d.Decision), Child: d.Child, Kept: d.Kept,
		SecretParams: d.SecretParams, SecretResults: d.SecretResults,
		Labels: fromText[map[string]string](d.Labels), Version: d.Version,
		EventSeq: d.EventSeq, Owed: fromOwedDocs(d.Owed),
	}
}
