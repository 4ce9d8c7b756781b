package mongostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// ErrConflict is returned when a document changed since it was read.
var ErrConflict = mongox.ErrConflict

// Store is the runs database.
type Store struct {
	runs, tasks, active, replicas, counters, idem *mongo.Collection
	logs                                          *mongo.Collection
}

// New returns the store over db.
func New(db *mongo.Database) *Store {
	return &Store{
		runs: db.Collection("runs"), tasks: db.Collection("taskruns"), active: db.Collection("active"),
		replicas: db.Collection("replicas"), counters: db.Collection("counters"), idem: db.Collection("idempotency"),
		logs: db.Collection("logs"),
	}
}

// EnsureIndexes creates the indexes of the query paths.
func (s *Store) EnsureIndexes(ctx context.Context) error {
	return errors.Join(
		mongox.EnsureIndexes(ctx, s.runs, mongo.IndexModel{Keys: bson.D{{Key: "team", Value: 1}, {Key: "creationDate", Value: 1}, {Key: "_id", Value: 1}}}),
		mongox.EnsureIndexes(ctx, s.runs, mongo.IndexModel{Keys: bson.D{{Key: "team", Value: 1}, {Key: "workflow", Value: 1}, {Key: "creationDate", Value: 1}}}),
		// Keys expire by PurgeKeys rather than a TTL index, which FerretDB does not have.
		mongox.EnsureIndexes(ctx, s.idem, mongo.IndexModel{Keys: bson.D{{Key: "created", Value: 1}}}),
	)
}

func notFound(id string) error {
	return apperr.New(apperr.WorkflowRunNotFound, "Workflow run '%s' was not found.", id)
}

// CreateRun stores a new run: its task runs first, then the run, so a run that exists has
// all its task runs.
func (s *Store) CreateRun(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun) error {
	if len(tasks) > 0 {
		docs := make([]any, len(tasks))
		for i, t := range tasks {
			docs[i] = toTaskDoc(t)
		}
		_, err := s.tasks.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
		if err != nil && !onlyDuplicates(err) {
			return fmt.Errorf("insert task runs of %s: %w", r.ID, err)
		}
	}
	if _, err := s.runs.InsertOne(ctx, toRunDoc(r)); err != nil {
		if mongox.IsDuplicateKey(err) {
			return fmt.Errorf("insert run %s: %w", r.ID, ErrConflict)
		}
		return fmt.Errorf("insert run %s: %w", r.ID, err)
	}
	return nil
}

// onlyDuplicates reports a bulk insert whose only failures are documents already there:
// a create retried after a crash.
func onlyDuplicates(err error) bool {
	var bw mongo.BulkWriteException
	if !errors.As(err, &bw) {
		return mongox.IsDuplicateKey(err)
	}
	for _, we := range bw.WriteErrors {
		if we.Code != 11000 {
			return false
		}
	}
	return bw.WriteConcernError == nil
}

// FindRun reads a run, with its definition when withDefinition.
func (s *Store) FindRun(ctx context.Context, id string, withDefinition bool) (*domain.Run, error) {
	opts := options.FindOne()
	if !withDefinition {
		opts.SetProjection(bson.M{"definition": 0})
	}
	d, err := mongox.FindOne[runDoc](ctx, s.runs, bson.M{"_id": id}, opts)
	if errors.Is(err, mongox.ErrNotFound) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, err
	}
	return d.run(withDefinition), nil
}

// FindTasks reads the task runs of r, in definition order.
func (s *Store) FindTasks(ctx context.Context, r *domain.Run) ([]*domain.TaskRun, error) {
	ids := make([]string, r.Tasks)
	for i := range ids {
		ids[i] = domain.TaskRunID(r.ID, i)
	}
	cur, err := s.tasks.Find(ctx, bson.M{"_id": bson.M{"$in": ids}})
	if err != nil {
		return nil, fmt.Errorf("find task runs of %s: %w", r.ID, err)
	}
	var docs []taskDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read task runs of %s: %w", r.ID, err)
	}
	out := make([]*domain.TaskRun, r.Tasks)
	for _, d := range docs {
		if d.Index >= 0 && d.Index < len(out) {
			out[d.Index] = d.task()
		}
	}
	for i, t := range out {
		if t == nil {
			return nil, fmt.Errorf("run %s misses task run %d", r.ID, i)
		}
	}
	return out, nil
}

// FindTask reads one task run.
func (s *Store) FindTask(ctx context.Context, id string) (*domain.TaskRun, error) {
	d, err := mongox.FindOne[taskDoc](ctx, s.tasks, bson.M{"_id": id})
	if errors.Is(err, mongox.ErrNotFound) {
		return nil, apperr.New(apperr.TaskRunNotFound, "Task run '%s' was not found.", id)
	}
	if err != nil {
		return nil, err
	}
	return d.task(), nil
}

// SaveStep stores a step: the changed task runs, each on the version it was read at, then
// the run when it changed. Versions advance in memory as writes succeed; ErrConflict means
// another writer moved first and the caller must reload.
func (s *Store) SaveStep(ctx context.Context, r *domain.Run, runChanged bool, tasks []*domain.TaskRun) error {
	if len(tasks) > 0 {
		models := make([]mongo.WriteModel, len(tasks))
		for i, t := range tasks {
			d := toTaskDoc(t)
			d.Version = t.Version + 1
			models[i] = mongo.NewReplaceOneModel().SetFilter(bson.M{"_id": t.ID, "version": t.Version}).SetReplacement(d)
		}
		res, err := s.tasks.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
		if err != nil {
			return fmt.Errorf("save task runs of %s: %w", r.ID, err)
		}
		if int(res.MatchedCount) != len(tasks) {
			return fmt.Errorf("save task runs of %s: %w", r.ID, ErrConflict)
		}
		for _, t := range tasks {
			t.Version++
		}
	}
	if !runChanged {
		return nil
	}
	d := toRunDoc(r)
	d.Version = r.Version + 1
	res, err := s.runs.ReplaceOne(ctx, bson.M{"_id": r.ID, "version": r.Version}, d)
	if err != nil {
		return fmt.Errorf("save run %s: %w", r.ID, err)
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("save run %s: %w", r.ID, ErrConflict)
	}
	r.Version++
	return nil
}

// SaveRun stores a run that changed without a step (a finalize, a start request's body).
func (s *Store) SaveRun(ctx context.Context, r *domain.Run) error {
	return s.SaveStep(ctx, r, true, nil)
}

// Heartbeat records a runner's heartbeat on a task run without moving its version: it is
// a hint for the replica that holds the run, not a state change.
func (s *Store) Heartbeat(ctx context.Context, taskRunID string, attempt int, runner string, at time.Time) (bool, error) {
	res, err := s.tasks.UpdateOne(ctx, bson.M{"_id": taskRunID, "attempt": attempt, "runner": runner, "status": string(domain.Running)},
		bson.M{"$set": bson.M{"heartbeat": at}})
	if err != nil {
		return false, fmt.Errorf("heartbeat %s: %w", taskRunID, err)
	}
	return res.MatchedCount == 1, nil
}

// Filter selects runs of a team.
type Filter struct {
	Team      string
	Labels    map[string]string
	Statuses  []string
	Phases    []string
	IDs       []string
	Workflows []string
	Triggers  []string
	From, To  *time.Time
	// None selects nothing.
	None bool
}

func (f Filter) bson() bson.M {
	m := bson.M{"team": f.Team}
	if len(f.Labels) > 0 {
		m["labelPairs"] = bson.M{"$all": labelPairs(f.Labels)}
	}
	in := func(field string, vals []string) {
		if len(vals) > 0 {
			m[field] = bson.M{"$in": vals}
		}
	}
	in("status", f.Statuses)
	in("phase", f.Phases)
	in("_id", f.IDs)
	in("workflow", f.Workflows)
	in("trigger", f.Triggers)
	if f.None {
		m["_id"] = bson.M{"$in": bson.A{}}
	}
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

// FindRuns returns one page of runs, without definitions, ordered by creation date.
func (s *Store) FindRuns(ctx context.Context, f Filter, p page.Request) ([]*domain.Run, int64, error) {
	docs, total, err := mongox.FindPage[runDoc](ctx, s.runs.Database().Collection(s.runs.Name()), f.bson(),
		mongox.Sort{Field: "creationDate", Tiebreak: "_id", Desc: p.Desc}, p.Offset(), int64(p.Size))
	if err != nil {
		return nil, 0, err
	}
	out := make([]*domain.Run, len(docs))
	for i, d := range docs {
		out[i] = d.run(false)
	}
	return out, total, nil
}

// CountRuns counts a team's runs by status.
func (s *Store) CountRuns(ctx context.Context, f Filter) (map[string]int64, error) {
	cur, err := s.runs.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: f.bson()}},
		{{Key: "$group", Value: bson.M{"_id": "$status", "n": bson.M{"$sum": 1}}}},
	})
	if err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	var rows []struct {
		ID string `bson:"_id"`
		N  int64  `bson:"n"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		return nil, fmt.Errorf("read run counts: %w", err)
	}
	out := map[string]int64{}
	for _, r := range rows {
		out[r.ID] = r.N
	}
	return out, nil
}
