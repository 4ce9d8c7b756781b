package mongostore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Actions are kept in three collections:
//
//   - actions:      every action, open or decided, written by _id alone;
//   - actionwrites: one document per version an update gave an action, _id
//     "<action id>@<version>", holding the action at that version;
//   - unapplied:    the ids of the actions that may be decided with their decision not yet
//     taken by their run, which the reconciler reads.
//
// An update does not write the action on {_id, version}: on the embedded FerretDB a filter
// that is not exactly {_id} reads the whole collection, and a team may have thousands of
// approvals open (10,000 made a conditional write take ~350 ms; 16 shards of them ~30 ms).
// Instead the update first inserts its version into actionwrites: an insert is a lookup,
// and only one writer inserts a given version, the others get a duplicate key (a lost
// race). Then it replaces the action by _id. Versions therefore land in order: a writer
// reads version v from actions only once v has landed there, so it never claims v+1
// before v's replace is done. A writer that died between its insert and its replace leaves
// a version claimed but not landed; once that is older than abandonAfter, whoever meets it
// lands it (rolls it forward), so nothing claimed is lost.

// abandonAfter is how long a claimed version may take to land before another writer lands
// it in its writer's place. The writer's insert and replace follow each other at once, so
// this is ample; it is long against clock skew between replicas too.
const abandonAfter = 5 * time.Second

// updateTries bounds how often an update of an action or a lock reads and tries again after
// losing a race; waitMin and waitMax bound the pause while another writer's version lands.
const (
	updateTries = 20
	waitMin     = time.Millisecond
	waitMax     = 16 * time.Millisecond
)

// actionDoc is an action as stored.
type actionDoc struct {
	ID            string        `bson:"_id"`
	Team          string        `bson:"team"`
	Type          string        `bson:"type"`
	Status        string        `bson:"status"`
	Workflow      string        `bson:"workflow"`
	WorkflowName  string        `bson:"workflowName"`
	RunID         string        `bson:"runId"`
	TaskRunID     string        `bson:"taskRunId"`
	TaskName      string        `bson:"taskName,omitempty"`
	Attempt       int           `bson:"attempt"`
	Instructions  string        `bson:"instructions,omitempty"`
	ApproverGroup string        `bson:"approverGroup,omitempty"`
	Required      int           `bson:"required"`
	Actioners     []actionerDoc `bson:"actioners,omitempty"`
	// Form and Values are JSON text (see docs.go): the form with its password parameters'
	// default and value sealed, the values with those named in SecretValues sealed.
	Form         string    `bson:"form,omitempty"`
	Values       string    `bson:"values,omitempty"`
	SecretValues []string  `bson:"secretValues,omitempty"`
	Initiator    string    `bson:"initiator,omitempty"`
	CreationDate time.Time `bson:"creationDate"`
	DecidedAt    time.Time `bson:"decidedAt,omitempty"`
	Reason       string    `bson:"reason,omitempty"`
	Hold         string    `bson:"hold,omitempty"`
	HoldUntil    time.Time `bson:"holdUntil,omitempty"`
	Applied      bool      `bson:"applied"`
	Version      int64     `bson:"version"`
}

type actionerDoc struct {
	ID       string    `bson:"id"`
	Name     string    `bson:"name,omitempty"`
	Email    string    `bson:"email,omitempty"`
	Approved bool      `bson:"approved"`
	Comments string    `bson:"comments,omitempty"`
	Date     time.Time `bson:"date"`
}

// actionWriteDoc is one version of an action, claimed by the update that writes it.
type actionWriteDoc struct {
	ID     string    `bson:"_id"`
	Team   string    `bson:"team"`
	At     time.Time `bson:"at"`
	Action actionDoc `bson:"action"`
}

func actionWriteID(action string, version int64) string {
	return action + "@" + strconv.FormatInt(version, 10)
}

func toActionDoc(a *domain.Action, box Sealer) actionDoc {
	d := actionDoc{
		ID: a.ID, Team: a.Team, Type: string(a.Type), Status: string(a.Status), Workflow: a.Workflow,
		WorkflowName: a.WorkflowName, RunID: a.RunID, TaskRunID: a.TaskRunID, TaskName: a.TaskName, Attempt: a.Attempt,
		Instructions: a.Instructions, ApproverGroup: a.ApproverGroup, Required: a.Required,
		Values: jsonText(sealValues(box, a.Values, a.SecretValues)), SecretValues: a.SecretValues,
		Initiator: a.Initiator, CreationDate: a.CreationDate, DecidedAt: a.DecidedAt, Reason: a.Reason, Hold: a.Hold, HoldUntil: a.HoldUntil,
		Applied: a.Applied, Version: a.Version,
	}
	if len(a.Form) > 0 {
		d.Form = jsonText(sealForm(box, a.Form))
	}
	for _, v := range a.Actioners {
		d.Actioners = append(d.Actioners, actionerDoc(v))
	}
	return d
}

func (d actionDoc) action(box Sealer) *domain.Action {
	a := &domain.Action{
		ID: d.ID, Team: d.Team, Type: domain.ActionType(d.Type), Status: domain.ActionStatus(d.Status),
		Workflow: d.Workflow, WorkflowName: d.WorkflowName, RunID: d.RunID, TaskRunID: d.TaskRunID,
		TaskName: d.TaskName, Attempt: d.Attempt, Instructions: d.Instructions, ApproverGroup: d.ApproverGroup,
		Required: d.Required, Values: openValues(box, fromText[map[string]any](d.Values), d.SecretValues),
		SecretValues: d.SecretValues, Initiator: d.Initiator, CreationDate: d.CreationDate.UTC(),
		DecidedAt: utc(d.DecidedAt), Reason: d.Reason, Hold: d.Hold, HoldUntil: utc(d.HoldUntil), Applied: d.Applied, Version: d.Version,
	}
	if d.Form != "" {
		a.Form = openForm(box, fromText[[]domain.Param](d.Form))
	}
	for _, v := range d.Actioners {
		v.Date = utc(v.Date)
		a.Actioners = append(a.Actioners, domain.Actioner(v))
	}
	return a
}

// unapplied reports whether d is decided with its decision perhaps not taken by its run.
func (d actionDoc) unapplied() bool {
	return !domain.ActionStatus(d.Status).Open() && !d.Applied
}

func actionNotFound(id string) error {
	return apperr.New(apperr.ActionNotFound, "Action '%s' was not found.", id)
}

// CreateAction stores a new action; one stored with its id already is kept as it is.
func (s *Store) CreateAction(ctx context.Context, a *domain.Action) error {
	d := toActionDoc(a, s.box)
	if d.unapplied() {
		if err := s.markUnapplied(ctx, d); err != nil {
			return err
		}
	}
	if _, err := s.actions.InsertOne(ctx, d); err != nil && !mongox.IsDuplicateKey(err) {
		return fmt.Errorf("insert action %s: %w", a.ID, err)
	}
	return nil
}

// FindAction reads one action.
func (s *Store) FindAction(ctx context.Context, id string) (*domain.Action, error) {
	d, err := s.findActionDoc(ctx, id)
	if err != nil {
		return nil, err
	}
	return d.action(s.box), nil
}

func (s *Store) findActionDoc(ctx context.Context, id string) (actionDoc, error) {
	d, err := mongox.FindOne[actionDoc](ctx, s.actions, bson.M{"_id": id})
	if errors.Is(err, mongox.ErrNotFound) {
		return actionDoc{}, actionNotFound(id)
	}
	if err != nil {
		return actionDoc{}, fmt.Errorf("read action %s: %w", id, err)
	}
	return d, nil
}

// UpdateAction applies fn to action id as stored and stores the result as its next
// version, reading again and applying fn anew when another writer took that version first.
// An error from fn stores nothing and is returned as it is.
func (s *Store) UpdateAction(ctx context.Context, id string, fn func(*domain.Action) error) (*domain.Action, error) {
	wait := waitMin
	lost := int64(-1) // the version a write of ours lost to another writer
	for tries := 0; ; {
		d, err := s.findActionDoc(ctx, id)
		if err != nil {
			return nil, err
		}
		if d.Version < lost {
			// The version that beat ours has not landed yet: let it, or land it for its
			// writer when it was abandoned.
			var landing bool
			if d, landing, err = s.catchUp(ctx, d); err != nil {
				return nil, err
			}
			if landing {
				if tries++; tries >= updateTries {
					return nil, fmt.Errorf("update action %s: %w", id, domain.ErrConflict)
				}
				if err := pause(ctx, wait); err != nil {
					return nil, err
				}
				wait = min(2*wait, waitMax)
				continue
			}
		}
		a := d.action(s.box)
		if err := fn(a); err != nil {
			return nil, err
		}
		a.ID, a.Version = id, d.Version+1
		next := toActionDoc(a, s.box)
		err = s.writeAction(ctx, d, next)
		if err == nil {
			return a, nil
		}
		if !errors.Is(err, domain.ErrConflict) {
			return nil, err
		}
		if tries++; tries >= updateTries {
			return nil, err
		}
		lost = next.Version
	}
}

// pause waits for d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// writeAction stores next, the version after prev: it claims the version, then replaces
// the action with it. A decision the run has still to take is marked unapplied before it
// is claimed, so the reconciler finds it whatever becomes of the writer.
func (s *Store) writeAction(ctx context.Context, prev, next actionDoc) error {
	if next.unapplied() && !prev.unapplied() {
		if err := s.markUnapplied(ctx, next); err != nil {
			return err
		}
	}
	claim := actionWriteDoc{ID: actionWriteID(next.ID, next.Version), Team: next.Team, At: time.Now(), Action: next}
	if _, err := s.actionWrites.InsertOne(ctx, claim); err != nil {
		if mongox.IsDuplicateKey(err) {
			err = domain.ErrConflict
		}
		return fmt.Errorf("write version %d of action %s: %w", next.Version, next.ID, err)
	}
	return s.landAction(ctx, next)
}

// landAction replaces the action with d, a version claimed in actionwrites.
func (s *Store) landAction(ctx context.Context, d actionDoc) error {
	res, err := s.actions.ReplaceOne(ctx, bson.M{"_id": d.ID}, d)
	if err != nil {
		return fmt.Errorf("write action %s: %w", d.ID, err)
	}
	if res.MatchedCount == 0 {
		return actionNotFound(d.ID) // removed with its team meanwhile
	}
	if d.Applied {
		if _, err := s.unapplied.DeleteOne(ctx, bson.M{"_id": d.ID}); err != nil {
			return fmt.Errorf("unmark action %s: %w", d.ID, err)
		}
	}
	return nil
}

// catchUp lands, in order, the versions claimed after d whose writers abandoned them, and
// answers the latest version then stored; landing is true when the next version is
// claimed and its writer is still at it.
func (s *Store) catchUp(ctx context.Context, d actionDoc) (_ actionDoc, landing bool, _ error) {
	for {
		w, err := mongox.FindOne[actionWriteDoc](ctx, s.actionWrites, bson.M{"_id": actionWriteID(d.ID, d.Version+1)})
		if errors.Is(err, mongox.ErrNotFound) {
			return d, false, nil
		}
		if err != nil {
			return d, false, fmt.Errorf("read version %d of action %s: %w", d.Version+1, d.ID, err)
		}
		if time.Since(w.At) < abandonAfter {
			return d, true, nil
		}
		if err := s.landAction(ctx, w.Action); err != nil {
			return d, false, err
		}
		d = w.Action
	}
}

// markUnapplied records that action d may hold a decision its run has not taken.
func (s *Store) markUnapplied(ctx context.Context, d actionDoc) error {
	_, err := s.unapplied.InsertOne(ctx, bson.M{"_id": d.ID, "team": d.Team})
	if err != nil && !mongox.IsDuplicateKey(err) {
		return fmt.Errorf("mark action %s unapplied: %w", d.ID, err)
	}
	return nil
}

// FindRunActions lists the actions of run, oldest first.
func (s *Store) FindRunActions(ctx context.Context, run string) ([]*domain.Action, error) {
	cur, err := s.actions.Find(ctx, bson.M{"runId": run},
		options.Find().SetSort(bson.D{{Key: "creationDate", Value: 1}, {Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("find actions of run %s: %w", run, err)
	}
	var docs []actionDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read actions of run %s: %w", run, err)
	}
	return s.actionsOf(docs), nil
}

func (s *Store) actionsOf(docs []actionDoc) []*domain.Action {
	out := make([]*domain.Action, len(docs))
	for i, d := range docs {
		out[i] = d.action(s.box)
	}
	return out
}

// FindUnapplied lists the actions decided before before whose decision their run has not
// taken, oldest decision first. It reads the few actions marked unapplied, each by _id,
// landing on the way a decision whose writer abandoned it; the marks of actions applied
// since are removed.
func (s *Store) FindUnapplied(ctx context.Context, before time.Time) ([]*domain.Action, error) {
	ids, err := findIDs(ctx, s.unapplied, bson.M{})
	if err != nil {
		return nil, fmt.Errorf("list unapplied actions: %w", err)
	}
	var docs []actionDoc
	for _, id := range ids {
		d, err := s.findActionDoc(ctx, id)
		if err == nil {
			d, _, err = s.catchUp(ctx, d)
		}
		if apperr.HasReason(err, apperr.ActionNotFound) {
			continue // being created, or removed with its team
		}
		if err != nil {
			return nil, err
		}
		if d.Applied {
			// A decision taken is never untaken: the mark is left over.
			if _, err := s.unapplied.DeleteOne(ctx, bson.M{"_id": id}); err != nil {
				return nil, fmt.Errorf("unmark action %s: %w", id, err)
			}
			continue
		}
		if d.unapplied() && d.DecidedAt.Before(before) {
			docs = append(docs, d)
		}
	}
	slices.SortFunc(docs, func(a, b actionDoc) int {
		if c := a.DecidedAt.Compare(b.DecidedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return s.actionsOf(docs), nil
}

// actionFilterDoc is the query of the actions f selects.
func actionFilterDoc(f domain.ActionFilter) bson.M {
	m := bson.M{"team": f.Team}
	in := func(field string, vals []string) {
		if len(vals) > 0 {
			m[field] = bson.M{"$in": vals}
		}
	}
	in("type", f.Types)
	in("status", f.Statuses)
	in("workflow", f.Workflows)
	if f.From != nil || f.To != nil {
		r := bson.M{}
		if f.From != nil {
			r["$gte"] = *f.From
		}
		if f.To != nil {
			r["$lte"] = *f.To
		}
		m["creationDate"] = r
	}
	return m
}

// actionSortFields maps a search's sort to the field it orders by: "name" orders by the
// workflow's name as the action shows it (workflowName), the name people tell actions
// apart by in a list. Anything else orders by creation date.
var actionSortFields = map[string]string{"creationDate": "creationDate", "name": "workflowName", "status": "status"}

func actionSortField(s domain.ActionSort) string {
	if f, ok := actionSortFields[s.Field]; ok {
		return f
	}
	return "creationDate"
}

// FindActions answers one page of the actions f selects, in order s (the page's own Sort
// and Desc are not read), ties broken by id, and how many f selects in all.
func (s *Store) FindActions(ctx context.Context, f domain.ActionFilter, o domain.ActionSort, p page.Request) ([]*domain.Action, int64, error) {
	docs, total, err := mongox.FindPage[actionDoc](ctx, s.actions, actionFilterDoc(f),
		mongox.Sort{Field: actionSortField(o), Tiebreak: "_id", Desc: !o.Asc}, p.Offset(), int64(p.Size))
	if err != nil {
		return nil, 0, fmt.Errorf("search actions of %s: %w", f.Team, err)
	}
	return s.actionsOf(docs), total, nil
}

// CountActions counts the actions f selects for a summary: the open approvals and manual
// actions, and the approvals in all and those decided.
func (s *Store) CountActions(ctx context.Context, f domain.ActionFilter) (domain.ActionCounts, error) {
	var c domain.ActionCounts
	cur, err := s.actions.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: actionFilterDoc(f)}},
		{{Key: "$group", Value: bson.M{"_id": bson.M{"type": "$type", "status": "$status"}, "n": bson.M{"$sum": 1}}}},
	})
	if err != nil {
		return c, fmt.Errorf("count actions of %s: %w", f.Team, err)
	}
	var rows []struct {
		Key struct {
			Type   string `bson:"type"`
			Status string `bson:"status"`
		} `bson:"_id"`
		N int64 `bson:"n"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		return c, fmt.Errorf("read action counts of %s: %w", f.Team, err)
	}
	for _, r := range rows {
		open := domain.ActionStatus(r.Key.Status).Open()
		switch domain.ActionType(r.Key.Type) {
		case domain.ApprovalAction:
			c.Approvals += r.N
			if open {
				c.OpenApprovals += r.N
			} else {
				c.ApprovalsClosed += r.N
			}
		case domain.ManualAction:
			if open {
				c.OpenManual += r.N
			}
		}
	}
	return c, nil
}

// DeleteTeamActions forgets team's actions, their versions and marks.
func (s *Store) DeleteTeamActions(ctx context.Context, team string) error {
	for _, coll := range []*mongo.Collection{s.unapplied, s.actionWrites, s.actions} {
		if _, err := coll.DeleteMany(ctx, bson.M{"team": team}); err != nil {
			return fmt.Errorf("delete the actions of %s from %s: %w", team, coll.Name(), err)
		}
	}
	return nil
}
