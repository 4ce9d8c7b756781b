package app

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/jsonbody"
	"github.com/baton-flow/baton/libs/jsondepth"
	"github.com/baton-flow/baton/libs/runsapi"
	"github.com/baton-flow/baton/libs/workflowsapi"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

// Bounds of what an event or a webhook may carry.
const (
	// MaxBatch bounds the events of one batch-mode request (413 beyond).
	MaxBatch = 100
	// MaxAttribute bounds, in bytes, an event's id, source, type and subject, and a
	// webhook's idempotency key: they name what is deduplicated and where it goes.
	MaxAttribute = 1024
	// ReceiptTTL is how long an event's source and id (or a webhook's idempotency key)
	// answer the run they started (API.md §8).
	ReceiptTTL = 24 * time.Hour
	// maxDepth bounds how deeply the data of an event nests arrays and objects, as the
	// service bounds any JSON body.
	maxDepth = 64
)

// Trigger kinds this file starts runs with.
const (
	triggerEvent   = "event"
	triggerWebhook = "webhook"
)

// Receipt records that an event (by its source and id) or a webhook (by its idempotency
// key) started a run, so that the same one again answers that run.
type Receipt struct {
	// Key names the delivery within the workflow it went to (see receiptKey).
	Key            string
	Team, Workflow string
	// Run is the run as first answered.
	Run     *events.WorkflowRun
	Created time.Time
}

// Receipts keeps the records of deliveries for ReceiptTTL.
type Receipts interface {
	// FindReceipt answers the record of key made at or after since; found is false when
	// there is none.
	FindReceipt(ctx context.Context, key string, since time.Time) (d Receipt, found bool, err error)
	// CreateReceipt stores d. A record of the same key made at or after since is kept as
	// it is (a concurrent twin wrote it first: it names the same run); an older one is
	// replaced.
	CreateReceipt(ctx context.Context, d Receipt, since time.Time) error
}

// Accepted is what became of one event or webhook: its run, and whether this delivery
// created it (false when it was seen before).
type Accepted struct {
	Run     *events.WorkflowRun
	Created bool
}

// Events starts runs from CloudEvents (POST /event) and plain webhooks (POST /webhook
// with a workflow reference).
//
// An event goes to the workflow its `ref` names, else to the first two segments of its
// subject. The caller must be allowed to submit runs of that workflow (workflowrun/write
// there, as a submit through the API), the workflow's event trigger must be on and its
// conditions hold on the event as JSON. The run's params are `event` (the event as
// JSON), `data` (its data) and each top-level key of an object's data except `event` and
// `data`, which would hide the first two, and the empty key (their values stay reachable as
// `$(params.data.event)`, `$(params.data.data)`). Data that is JSON (by its content type,
// or without one when it parses) is the JSON value; other text is a string; bytes that
// are not UTF-8 text (or came base64-encoded) are a base64 string.
//
// Deduplication: the same source and id sent to the same workflow within ReceiptTTL
// answer the first run (Created false). The record is kept in the service's database,
// and the run is submitted under an idempotency key made of the source and id, so that a
// delivery interrupted between the run and its record, and two identical deliveries at
// once, still make one run. The record is written once the run is there, without holding
// the answer (see record).
type Events struct {
	runs     Runs
	receipts Receipts
	triggers *TriggerCache
	now      func() time.Time
	log      *slog.Logger

	// recording bounds the records written in the background; background waits for them.
	recording  chan struct{}
	background sync.WaitGroup
}

// Bounds of the records written after the answer.
const (
	maxRecording  = 256
	recordTimeout = 10 * time.Second
)

// NewEvents returns the use case; triggers reads the workflows' triggers (a TriggerCache
// over the Workflows peer).
func NewEvents(runs Runs, triggers *TriggerCache, receipts Receipts, now func() time.Time, log *slog.Logger) *Events {
	return &Events{runs: runs, receipts: receipts, triggers: triggers, now: now, log: log, recording: make(chan struct{}, maxRecording)}
}

// Baton's own status events may start runs, so that one workflow can follow another's
// end, but a chain of them must end: a sink that sends them back to /event would
// otherwise start runs that start runs without limit. Only a run's end starts one (a run
// has one, where it has many status changes and task runs), and the runs so started carry
// their place in the chain in ChainLabel, which their own end carries on; past MaxChain
// the chain stops.
const (
	// ChainLabel is the label of a run started by a run's end: how many runs' ends led to
	// it.
	ChainLabel = "events.baton.io/chain"
	// MaxChain is how long such a chain may grow, as runs.maxDepth bounds child runs.
	MaxChain = 10
)

// statusTypePrefix starts the type of every status event Baton publishes.
const statusTypePrefix = "io.baton.event.status."

// chainOf reads a Baton status event of type typ with data: the label its run gets, or
// why it starts none. Other events start runs outside any chain (nil labels).
func chainOf(typ string, data any) (map[string]string, error) {
	if !strings.HasPrefix(typ, statusTypePrefix) {
		return nil, nil
	}
	if typ != events.TypeStatusWorkflowRun {
		return nil, apperr.New(apperr.RequestInvalid,
			"Baton's %s events do not start runs: a run's end (%s, phase completed) does.", typ, events.TypeStatusWorkflowRun)
	}
	run, _ := data.(map[string]any)
	if phase, _ := run["phase"].(string); phase != "completed" {
		return nil, apperr.New(apperr.RequestInvalid,
			"Only a run's end (phase completed) starts runs; this event's run is in phase %q.", phase)
	}
	labels, _ := run["labels"].(map[string]any)
	before := 0
	if raw, ok := labels[ChainLabel].(string); ok {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 {
			return nil, apperr.New(apperr.RequestInvalid, "The run's label %s is %q, not a count.", ChainLabel, raw)
		}
		before = n
	}
	if before+1 > MaxChain {
		return nil, apperr.New(apperr.RequestInvalid,
			"This run's end would start run %d of a chain of runs started by runs' ends; a chain stops at %d.", before+1, MaxChain)
	}
	return map[string]string{ChainLabel: strconv.Itoa(before + 1)}, nil
}

// incoming is one event or webhook on its way to a run.
type incoming struct {
	team, workflow string
	// labels are the run's: its place in a chain of runs started by runs' ends.
	labels map[string]string
	// doc is what the trigger's conditions are evaluated on.
	doc    any
	params map[string]any
	// key names the delivery in the records (empty: not deduplicated); runKey is the
	// run's idempotency key.
	key, runKey string
	// seen is the run of an earlier delivery of the same key.
	seen *events.WorkflowRun
}

// Accept starts the runs of evs, in order, and answers them in the same order. ref,
// when not empty, names the workflow of every event (`<team>/<workflow>`).
//
// A batch is checked whole before anything runs: an event that is not valid, names no
// workflow, goes to a workflow the caller may not run or does not exist, or whose trigger
// refuses it, refuses the whole request (its error names the event by its index), and no
// run is started. Runs are then submitted one after another; a submit that fails (a
// quota, the runs service unavailable) ends the request with that error, and the runs
// already started stay: sending the batch again answers them as seen and starts the rest.
func (e *Events) Accept(ctx context.Context, ref string, evs []event.Event) ([]Accepted, error) {
	switch {
	case len(evs) == 0:
		return nil, apperr.New(apperr.RequestInvalid, "The batch holds no event.")
	case len(evs) > MaxBatch:
		return nil, apperr.New(apperr.RequestTooLarge, "A batch holds at most %d events; this one has %d.", MaxBatch, len(evs))
	}
	batch := len(evs) > 1
	which := func(i int, err error) error {
		if !batch {
			return err
		}
		var ae *apperr.Error
		if errors.As(err, &ae) {
			w := apperr.Wrap(ae.Reason, err, "Event %d of the batch: %s", i, ae.Message)
			w.Fields, w.RetryAfter = ae.Fields, ae.RetryAfter
			return w
		}
		return fmt.Errorf("event %d of the batch: %w", i, err)
	}
	in := make([]incoming, len(evs))
	for i := range evs {
		x, err := e.incomingEvent(ref, &evs[i])
		if err != nil {
			return nil, which(i, err)
		}
		in[i] = x
	}
	for i := range in {
		if err := e.admit(ctx, &in[i], triggerEvent); err != nil {
			return nil, which(i, err)
		}
	}
	out := make([]Accepted, len(in))
	for i := range in {
		a, err := e.start(ctx, &in[i], triggerEvent)
		if err != nil {
			return nil, which(i, err)
		}
		out[i] = a
	}
	return out, nil
}

// Webhook starts a run of the workflow ref names (`<team>/<workflow>`) with param `data`
// = body, when the caller may run it and its webhook trigger is on and its conditions
// hold on body. A key (the sender's Idempotency-Key) makes the same delivery again within
// ReceiptTTL answer the first run, as events' source and id do.
func (e *Events) Webhook(ctx context.Context, ref string, body any, key string) (Accepted, error) {
	if _, err := principal(ctx); err != nil {
		return Accepted{}, err
	}
	team, workflow, err := parseRef(ref)
	if err != nil {
		return Accepted{}, err
	}
	if len(key) > MaxAttribute {
		return Accepted{}, apperr.New(apperr.RequestInvalid, "The Idempotency-Key is %d bytes long; at most %d are accepted.", len(key), MaxAttribute)
	}
	x := incoming{team: team, workflow: workflow, doc: body, params: map[string]any{"data": body}}
	if ce, ok := body.(map[string]any); ok && ce["specversion"] != nil {
		// A CloudEvent sent to the webhook (a sink pointed here) is held to the same chain.
		typ, _ := ce["type"].(string)
		if x.labels, err = chainOf(typ, ce["data"]); err != nil {
			return Accepted{}, err
		}
	}
	if key != "" {
		x.key = receiptKey(triggerWebhook, team, workflow, key)
		x.runKey = runKey(triggerWebhook, key)
	}
	if err := e.admit(ctx, &x, triggerWebhook); err != nil {
		return Accepted{}, err
	}
	return e.start(ctx, &x, triggerWebhook)
}

// incomingEvent checks ev and makes what its run needs; it reads nothing.
func (e *Events) incomingEvent(ref string, ev *event.Event) (incoming, error) {
	if err := ev.Validate(); err != nil {
		return incoming{}, apperr.Wrap(apperr.RequestInvalid, err, "The event is not a valid CloudEvent: %s.", strings.TrimSpace(err.Error()))
	}
	if v := ev.SpecVersion(); v != event.CloudEventsVersionV1 {
		return incoming{}, apperr.New(apperr.RequestInvalid, "The event's specversion is %q; CloudEvents %s is accepted.", v, event.CloudEventsVersionV1)
	}
	for name, v := range map[string]string{"id": ev.ID(), "source": ev.Source(), "type": ev.Type(), "subject": ev.Subject()} {
		if len(v) > MaxAttribute {
			return incoming{}, apperr.New(apperr.RequestInvalid, "The event's %s is %d bytes long; at most %d are accepted.", name, len(v), MaxAttribute)
		}
	}
	if ref == "" {
		ref = subjectRef(ev.Subject())
		if ref == "" {
			return incoming{}, apperr.New(apperr.RequestInvalid,
				"The event names no workflow: send ref=<team>/<workflow>, or a subject starting with <team>/<workflow>/.")
		}
	}
	team, workflow, err := parseRef(ref)
	if err != nil {
		return incoming{}, err
	}
	data, hasData, err := eventData(ev)
	if err != nil {
		return incoming{}, err
	}
	labels, err := chainOf(ev.Type(), data)
	if err != nil {
		return incoming{}, err
	}
	doc := eventDoc(ev, data, hasData)
	params := map[string]any{}
	if obj, ok := data.(map[string]any); ok {
		for k, v := range obj {
			if k != "" { // a param needs a name
				params[k] = v
			}
		}
	}
	// The event and its data win over keys of the data that share their names.
	params["event"] = doc
	if hasData {
		params["data"] = data
	} else {
		delete(params, "data")
	}
	return incoming{team: team, workflow: workflow, doc: doc, params: params, labels: labels,
		key:    receiptKey(triggerEvent, team, workflow, ev.Source()+"\x00"+ev.ID()),
		runKey: runKey(triggerEvent, ev.Source()+"\x00"+ev.ID())}, nil
}

// admit checks that the caller may run x's workflow, and, unless x was delivered before,
// that the trigger of kind lets x start it.
func (e *Events) admit(ctx context.Context, x *incoming, kind string) error {
	if _, err := auth.Require(ctx, auth.Scope{Team: x.team, Workflow: x.workflow}, "workflowrun", "write"); err != nil {
		return err
	}
	if x.key != "" {
		d, found, err := e.receipts.FindReceipt(ctx, x.key, e.now().Add(-ReceiptTTL))
		if err != nil {
			return err
		}
		if found && d.Run != nil {
			// Seen before: its run is the answer, whatever the trigger says now.
			x.seen = d.Run
			return nil
		}
	}
	w, err := e.triggers.Get(ctx, x.team, kind, x.workflow)
	if err != nil {
		return err
	}
	name := x.team + "/" + x.workflow
	if !w.Trigger.Enabled {
		return apperr.New(apperr.WorkflowRunTriggerDisabled, "The %s trigger of workflow '%s' is disabled.", kind, name)
	}
	conds := make([]domain.Condition, len(w.Trigger.Conditions))
	for i, c := range w.Trigger.Conditions {
		conds[i] = domain.Condition{Field: c.Field, Operation: c.Operation, Value: c.Value, Values: c.Values}
	}
	if err := domain.Holds(conds, x.doc); err != nil {
		return apperr.Wrap(apperr.WorkflowRunTriggerDisabled, err, "The %s trigger of workflow '%s' does not start a run for this %s: %s.", kind, name, kind, err.Error())
	}
	return nil
}

// start submits x's run, unless x was delivered before, and records the delivery.
func (e *Events) start(ctx context.Context, x *incoming, kind string) (Accepted, error) {
	if x.seen != nil {
		return Accepted{Run: x.seen}, nil
	}
	p, err := principal(ctx)
	if err != nil {
		return Accepted{}, err
	}
	sub, err := e.runs.Submit(ctx, x.team, x.workflow, runsapi.SubmitRun{
		Params: x.params, Labels: x.labels, Trigger: kind, IdempotencyKey: x.runKey,
		InitiatedBy: runsapi.Initiator{Type: p.Type, ID: p.ID, Name: cmp.Or(p.Name, p.Email, p.ID), Person: p.Person},
	})
	if err != nil {
		return Accepted{}, err
	}
	run := sub.Run
	if run == nil {
		// A runs service answering only the run's state still names the run.
		run = &events.WorkflowRun{ID: sub.ID, Status: sub.Status, Phase: sub.Phase, Team: x.team, WorkflowRef: x.workflow, Trigger: kind}
	}
	if x.key != "" {
		now := e.now()
		e.record(ctx, Receipt{Key: x.key, Team: x.team, Workflow: x.workflow, Run: run, Created: now})
	}
	return Accepted{Run: run, Created: sub.Created}, nil
}

// record writes d after the answer: the run's idempotency key already makes a delivery
// sent again (before the record is written, or if writing it failed) answer the same
// run, so the caller need not wait for it. At most maxRecording are written at once in
// the background; beyond, the caller writes its own, which slows senders down rather
// than queueing without bound.
func (e *Events) record(ctx context.Context, d Receipt) {
	write := func(ctx context.Context) {
		if err := e.receipts.CreateReceipt(ctx, d, d.Created.Add(-ReceiptTTL)); err != nil && e.log != nil {
			e.log.Warn("record an event's run; the run's idempotency key still deduplicates it", "run", d.Run.ID, "err", err)
		}
	}
	select {
	case e.recording <- struct{}{}:
	default:
		write(ctx)
		return
	}
	e.background.Add(1)
	go func() {
		defer e.background.Done()
		defer func() { <-e.recording }()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
		defer cancel()
		write(ctx)
	}()
}

// Wait waits for the records being written in the background.
func (e *Events) Wait() { e.background.Wait() }

// receiptKey names a delivery in the records: a digest, so that what senders put in ids
// (any characters, NUL included) never reaches the database, and keys have one length.
func receiptKey(kind, team, workflow, id string) string {
	sum := sha256.Sum256([]byte(kind + "\x00" + team + "\x00" + workflow + "\x00" + id))
	return kind + ":" + hex.EncodeToString(sum[:])
}

// runKey is the idempotency key of a delivery's run; the runs service scopes keys to the
// workflow already.
func runKey(kind, id string) string {
	sum := sha256.Sum256([]byte(id))
	return kind + ":" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// subjectRef is `<team>/<workflow>` from the first two segments of a subject
// (`team/workflow/…`, a leading slash allowed); "" when it has fewer.
func subjectRef(subject string) string {
	parts := strings.SplitN(strings.TrimPrefix(subject, "/"), "/", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return ""
	}
	return parts[0] + "/" + parts[1]
}

// maxName bounds team and workflow names (API.md §1).
const maxName = 64

// parseRef splits `<team>/<workflow>`. Names are slugs; anything else names nothing that
// can exist, and is refused as malformed rather than looked up.
func parseRef(ref string) (team, workflow string, err error) {
	team, workflow, ok := strings.Cut(ref, "/")
	if !ok || !validName(team) || !validName(workflow) {
		return "", "", apperr.New(apperr.RequestInvalid, "ref must be <team>/<workflow>, each a name of letters, digits, '-', '_' or '.' (at most %d), got %q.",
			maxName, truncate(ref, 100))
	}
	return team, workflow, nil
}

func validName(s string) bool {
	if s == "" || len(s) > maxName {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
		default:
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// eventData decodes ev's data (see Events); hasData is false for an event without.
func eventData(ev *event.Event) (data any, hasData bool, err error) {
	raw := ev.Data()
	if len(raw) == 0 {
		return nil, false, nil
	}
	if ev.DataBase64 {
		return base64.StdEncoding.EncodeToString(raw), true, nil
	}
	ct := ev.DataContentType()
	mt, _, _ := mime.ParseMediaType(ct)
	switch {
	case isJSONMedia(mt):
		v, err := DecodeJSON(raw)
		if err != nil {
			msg := err.Error()
			if ae, ok := apperr.As(err); ok {
				msg = ae.Message
			}
			return nil, false, apperr.Wrap(apperr.RequestInvalid, err, "The event's data (%s): %s", ct, msg)
		}
		return v, true, nil
	case ct == "":
		// No content type: JSON when it parses, else what text or bytes make.
		v, err := DecodeJSON(raw)
		if err == nil {
			return v, true, nil
		}
		if errors.Is(err, errTooDeep) {
			return nil, false, err
		}
	}
	if utf8.Valid(raw) {
		return string(raw), true, nil
	}
	return base64.StdEncoding.EncodeToString(raw), true, nil
}

func isJSONMedia(mt string) bool {
	return mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json")
}

var errTooDeep = errors.New("nested too deeply")

// DecodeJSON decodes one JSON value, numbers kept exact (json.Number), refusing (400)
// values nested deeper than the service accepts and anything after the value.
func DecodeJSON(raw []byte) (any, error) {
	if jsondepth.Exceeds(raw, maxDepth) {
		return nil, apperr.Wrap(apperr.RequestInvalid, errTooDeep, "The JSON nests arrays and objects deeper than %d levels.", maxDepth)
	}
	var v any
	if err := jsonbody.DecodeNumbers(raw, &v); err != nil {
		return nil, apperr.Wrap(apperr.RequestInvalid, err, "The JSON is not valid: %s", err.Error())
	}
	return v, nil
}

// eventDoc is ev as JSON, its data decoded: what conditions are evaluated on and the
// run's `event` param.
func eventDoc(ev *event.Event, data any, hasData bool) map[string]any {
	doc := map[string]any{}
	for k, v := range ev.Extensions() {
		switch v := v.(type) {
		case string, bool:
			doc[k] = v
		case int32:
			doc[k] = json.Number(strconv.FormatInt(int64(v), 10))
		default:
			if s, err := types.Format(v); err == nil {
				doc[k] = s
			}
		}
	}
	doc["specversion"] = ev.SpecVersion()
	doc["id"] = ev.ID()
	doc["source"] = ev.Source()
	doc["type"] = ev.Type()
	if s := ev.Subject(); s != "" {
		doc["subject"] = s
	}
	if t := ev.Time(); !t.IsZero() {
		doc["time"] = t.UTC().Format(time.RFC3339Nano)
	}
	// Without data a content type describes nothing; in binary mode a proxy may have set
	// one on the empty body.
	if ct := ev.DataContentType(); ct != "" && hasData {
		doc["datacontenttype"] = ct
	}
	if s := ev.DataSchema(); s != "" {
		doc["dataschema"] = s
	}
	if hasData {
		doc["data"] = data
	}
	return doc
}

// TriggerCache keeps the workflows' triggers for a short while: every event needs its
// workflow's, and asking the workflows service each time would cost a call per event. A
// trigger turned off or changed takes effect within its TTL here (the runs service checks
// that the trigger is on at each submit anyway). Failures are not kept, and one question
// per workflow and kind is asked at a time.
type TriggerCache struct {
	workflows Workflows
	ttl       time.Duration
	now       func() time.Time

	mu      sync.Mutex
	entries map[triggerKey]*triggerEntry
}

// maxTriggers bounds the entries kept; beyond, the expired ones are dropped, and all when
// none has.
const maxTriggers = 10_000

// triggerKey names what an entry answers: a workflow's trigger of one kind.
type triggerKey struct{ team, kind, workflow string }

type triggerEntry struct {
	ready chan struct{}
	at    time.Time
	w     workflowsapi.TriggeredWorkflow
	err   error
}

// NewTriggerCache keeps workflows' answers for ttl.
func NewTriggerCache(workflows Workflows, ttl time.Duration, now func() time.Time) *TriggerCache {
	return &TriggerCache{workflows: workflows, ttl: ttl, now: now, entries: map[triggerKey]*triggerEntry{}}
}

// Get answers workflow's trigger of kind in team (WORKFLOW_NOT_FOUND, TEAM_NOT_FOUND for
// what is not there).
func (c *TriggerCache) Get(ctx context.Context, team, kind, workflow string) (workflowsapi.TriggeredWorkflow, error) {
	key := triggerKey{team, kind, workflow}
	for {
		c.mu.Lock()
		en, ok := c.entries[key]
		if ok {
			select {
			case <-en.ready:
				if en.err == nil && c.now().Sub(en.at) < c.ttl {
					c.mu.Unlock()
					return en.w, nil
				}
				ok = false
			default:
			}
		}
		if !ok {
			en = &triggerEntry{ready: make(chan struct{})}
			c.evict()
			c.entries[key] = en
			c.mu.Unlock()
			c.fetch(ctx, en, key)
			return en.w, en.err
		}
		c.mu.Unlock()
		select {
		case <-en.ready:
			if en.err == nil {
				return en.w, nil
			}
			// The one asking failed (its own deadline, say): ask again.
		case <-ctx.Done():
			return workflowsapi.TriggeredWorkflow{}, ctx.Err()
		}
	}
}

func (c *TriggerCache) fetch(ctx context.Context, en *triggerEntry, key triggerKey) {
	defer close(en.ready)
	team, workflow := key.team, key.workflow
	got, err := c.workflows.Triggers(ctx, team, key.kind, workflow)
	switch {
	case err != nil:
		en.err = err
	case len(got.Workflows) == 0:
		en.err = apperr.New(apperr.WorkflowNotFound, "Workflow '%s' was not found in team '%s'.", workflow, team)
	default:
		en.w = got.Workflows[0]
	}
	en.at = c.now()
	if en.err != nil {
		c.mu.Lock()
		if c.entries[key] == en {
			delete(c.entries, key)
		}
		c.mu.Unlock()
	}
}

// Forget drops what is kept of team's workflow (every kind), so its next event reads its
// triggers again: the workflow was saved or deleted.
func (c *TriggerCache) Forget(team, workflow string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key := range c.entries {
		if key.team == team && key.workflow == workflow {
			delete(c.entries, key)
		}
	}
}

// evict makes room when the entries reach maxTriggers; the caller holds the lock.
func (c *TriggerCache) evict() {
	if len(c.entries) < maxTriggers {
		return
	}
	now := c.now()
	for k, en := range c.entries {
		select {
		case <-en.ready:
			if now.Sub(en.at) >= c.ttl {
				delete(c.entries, k)
			}
		default:
		}
	}
	if len(c.entries) >= maxTriggers {
		clear(c.entries)
	}
}
