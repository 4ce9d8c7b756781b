// Package mongostore keeps the task catalogue in the tasks service's own MongoDB database
// and turns driver errors into domain errors.
//
// Layout. Every task has a head document in `tasks`, `_id` "global/<name>" or
// "team/<team>/<name>", holding its latest version (body, status, labels, creation date)
// and the changelog of every version: reading the latest version, the changelog and
// searching touch heads only, and the first two are `_id` lookups (the only lookups
// FerretDB serves from an index). Superseded versions live in `task_versions`, `_id`
// "<head id>/<incarnation>/<version>", read by `_id` once the head is known.
//
// Writes without transactions. The head is the commit point: it changes with one
// conditional update on its revision (field `version`, see mongox.UpdateVersioned), so
// concurrent PUTs never lose one another. Before the head moves past version N, the
// version document N is written from the head as read, conditional on its revision being
// newer than what is stored: any number of racing or repeated writers leave the final
// content of N, and versions below the head's latest are always there. The incarnation
// (fresh at every create) keeps leftovers of a deleted task from passing for versions
// of a new task with the same name.
//
// Bodies are stored as the task's JSON text (taskjson): tasks carry clients' unknown
// fields and annotation keys with dots or `$`, which BSON field names cannot hold, and
// JSON text keeps numbers and key order exactly as written. The default and value of a
// password parameter are sealed in that text (see Sealer), in heads and versions alike.
package mongostore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/tasks/internal/domain"
)

// Collection names.
const (
	HeadsCollection    = "tasks"
	VersionsCollection = "task_versions"
)

type headDoc struct {
	ID           string    `bson:"_id"`
	Scope        string    `bson:"scope"`
	Team         string    `bson:"team"`
	Name         string    `bson:"name"`
	Incarnation  string    `bson:"incarnation"`
	Latest       int       `bson:"latest"`
	Status       string    `bson:"status"`
	CreationDate time.Time `bson:"creationDate"`
	// LabelPairs hold "key=value" per label: label keys such as `baton.io/x` cannot be
	// BSON field names to filter on.
	LabelPairs []string     `bson:"labelPairs"`
	Body       string       `bson:"body"`
	History    []historyDoc `bson:"history"`
	// Rev is the head's revision, compared and incremented by every update.
	Rev int64 `bson:"version"`
}

type historyDoc struct {
	Version int       `bson:"version"`
	Author  string    `bson:"author"`
	Reason  string    `bson:"reason,omitempty"`
	Date    time.Time `bson:"date"`
}

type versionDoc struct {
	ID          string `bson:"_id"`
	Head        string `bson:"head"`
	Incarnation string `bson:"incarnation"`
	Version     int    `bson:"taskVersion"`
	// Rev is the head revision the body was taken from; a newer one wins.
	Rev  int64  `bson:"rev"`
	Body string `bson:"body"`
}

// headID is the `_id` of a task's head.
func headID(ref domain.Ref) string {
	if ref.Scope == domain.ScopeTeam {
		return "team/" + ref.Team + "/" + ref.Name
	}
	return "global/" + ref.Name
}

func versionID(h headDoc, version int) string {
	return h.ID + "/" + h.Incarnation + "/" + strconv.Itoa(version)
}

func labelPairs(labels map[string]string) []string {
	out := make([]string, 0, len(labels))
	for k, v := range labels {
		out = append(out, k+"="+v)
	}
	return out
}

func historyOf(t domain.Task) historyDoc {
	return historyDoc{Version: t.Version, Author: t.Changelog.Author, Reason: t.Changelog.Reason, Date: t.Changelog.Date}
}

// Tasks is the Mongo TaskStore.
type Tasks struct {
	heads    *mongo.Collection
	versions *mongo.Collection
	newID    func() string
	box      Sealer
}

// NewTasks returns the store over db, creating its indexes. box seals password
// parameters' defaults and values.
func NewTasks(ctx context.Context, db *mongo.Database, box Sealer) (*Tasks, error) {
	if box == nil {
		return nil, errors.New("task store: a Sealer is required")
	}
	s := &Tasks{
		box:      box,
		heads:    db.Collection(HeadsCollection),
		versions: db.Collection(VersionsCollection),
		newID:    func() string { return bson.NewObjectID().Hex() },
	}
	if err := mongox.EnsureIndexes(ctx, s.heads,
		mongo.IndexModel{Keys: bson.D{{Key: "scope", Value: 1}, {Key: "team", Value: 1}, {Key: "creationDate", Value: 1}}},
	); err != nil {
		return nil, fmt.Errorf("task indexes: %w", err)
	}
	if err := mongox.EnsureIndexes(ctx, s.versions,
		mongo.IndexModel{Keys: bson.D{{Key: "head", Value: 1}, {Key: "incarnation", Value: 1}}},
	); err != nil {
		return nil, fmt.Errorf("task version indexes: %w", err)
	}
	return s, nil
}

func (s *Tasks) head(ctx context.Context, ref domain.Ref) (headDoc, error) {
	h, err := mongox.FindOne[headDoc](ctx, s.heads, bson.M{"_id": headID(ref)})
	if errors.Is(err, mongox.ErrNotFound) {
		return headDoc{}, domain.TaskNotFound(ref, 0)
	}
	if err != nil {
		return headDoc{}, fmt.Errorf("find task %s: %w", ref, err)
	}
	return h, nil
}

// CreateTask stores t as the first version of a new task.
func (s *Tasks) CreateTask(ctx context.Context, t domain.Task) error {
	body, err := s.encode(t)
	if err != nil {
		return fmt.Errorf("encode task %s: %w", t.Ref(), err)
	}
	h := headDoc{
		ID: headID(t.Ref()), Scope: string(t.Scope), Team: t.Team, Name: t.Name, Incarnation: s.newID(),
		Latest: t.Version, Status: string(t.Status), CreationDate: t.CreationDate, LabelPairs: labelPairs(t.Labels),
		Body: string(body), History: []historyDoc{historyOf(t)}, Rev: 1,
	}
	if _, err := s.heads.InsertOne(ctx, h); err != nil {
		if mongox.IsDuplicateKey(err) {
			return domain.TaskAlreadyExists(t.Ref())
		}
		return fmt.Errorf("insert task %s: %w", t.Ref(), err)
	}
	return nil
}

// FindTask returns the latest version of a task.
func (s *Tasks) FindTask(ctx context.Context, ref domain.Ref) (domain.Task, error) {
	h, err := s.head(ctx, ref)
	if err != nil {
		return domain.Task{}, err
	}
	return s.decode(h.Body)
}

// FindTaskVersion returns one version of a task: the latest from its head, older ones
// from their own documents.
func (s *Tasks) FindTaskVersion(ctx context.Context, ref domain.Ref, version int) (domain.Task, error) {
	h, err := s.head(ctx, ref)
	if err != nil {
		return domain.Task{}, err
	}
	switch {
	case version == h.Latest:
		return s.decode(h.Body)
	case version < 1 || version > h.Latest:
		return domain.Task{}, domain.TaskNotFound(ref, version)
	}
	v, err := mongox.FindOne[versionDoc](ctx, s.versions, bson.M{"_id": versionID(h, version)})
	if errors.Is(err, mongox.ErrNotFound) {
		return domain.Task{}, domain.TaskNotFound(ref, version)
	}
	if err != nil {
		return domain.Task{}, fmt.Errorf("find version %d of task %s: %w", version, ref, err)
	}
	return s.decode(v.Body)
}

// FindHistory returns the changelog of every version, oldest first.
func (s *Tasks) FindHistory(ctx context.Context, ref domain.Ref) ([]domain.VersionChange, error) {
	h, err := s.head(ctx, ref)
	if err != nil {
		return nil, err
	}
	out := make([]domain.VersionChange, len(h.History))
	for i, c := range h.History {
		out[i] = domain.VersionChange{Version: c.Version, Changelog: domain.Changelog{Author: c.Author, Reason: c.Reason, Date: c.Date.UTC()}}
	}
	return out, nil
}

// maxAttempts bounds retries of an update that lost a race with another writer.
const maxAttempts = 5

// UpdateTask writes the version fn decides, conditionally on the head's revision.
func (s *Tasks) UpdateTask(ctx context.Context, ref domain.Ref, fn func(domain.Task) (domain.Task, error)) (domain.Task, error) {
	for range maxAttempts {
		h, err := s.head(ctx, ref)
		if err != nil {
			return domain.Task{}, err
		}
		cur, err := s.decode(h.Body)
		if err != nil {
			return domain.Task{}, err
		}
		next, err := fn(cur)
		if err != nil {
			return domain.Task{}, err
		}
		history := h.History
		switch next.Version {
		case h.Latest + 1:
			if err := s.keepVersion(ctx, h); err != nil {
				return domain.Task{}, err
			}
			history = append(history, historyOf(next))
		case h.Latest:
			history[len(history)-1] = historyOf(next)
		default:
			return domain.Task{}, fmt.Errorf("update task %s: version %d follows neither replace nor add on version %d", ref, next.Version, h.Latest)
		}
		body, err := s.encode(next)
		if err != nil {
			return domain.Task{}, fmt.Errorf("encode task %s: %w", ref, err)
		}
		set := bson.M{
			"latest": next.Version, "status": string(next.Status), "labelPairs": labelPairs(next.Labels),
			"body": string(body), "history": history,
		}
		err = mongox.UpdateVersioned(ctx, s.heads, bson.M{"_id": h.ID}, h.Rev, bson.M{"$set": set})
		if errors.Is(err, mongox.ErrConflict) {
			continue
		}
		if err != nil {
			return domain.Task{}, fmt.Errorf("update task %s: %w", ref, err)
		}
		return next, nil
	}
	return domain.Task{}, apperr.New(apperr.ConcurrentModification, "Task '%s' is being changed by others; try again.", ref.Name)
}

// keepVersion writes the head's latest version to its own document, unless a write from
// the same or a newer revision of the head is already there. It reads and inserts by `_id`
// first, since on FerretDB only `_id` lookups avoid a collection scan; the conditional
// replace is needed only when the latest version was replaced in place.
func (s *Tasks) keepVersion(ctx context.Context, h headDoc) error {
	v := versionDoc{
		ID: versionID(h, h.Latest), Head: h.ID, Incarnation: h.Incarnation, Version: h.Latest, Rev: h.Rev, Body: h.Body,
	}
	for range maxAttempts {
		stored, err := mongox.FindOne[versionDoc](ctx, s.versions, bson.M{"_id": v.ID})
		switch {
		case errors.Is(err, mongox.ErrNotFound):
			_, err := s.versions.InsertOne(ctx, v)
			if mongox.IsDuplicateKey(err) {
				continue // another writer got there first: compare with its revision
			}
			if err != nil {
				return fmt.Errorf("keep version %d of task %s: %w", h.Latest, h.ID, err)
			}
			return nil
		case err != nil:
			return fmt.Errorf("keep version %d of task %s: %w", h.Latest, h.ID, err)
		case stored.Rev >= h.Rev:
			return nil
		}
		res, err := s.versions.ReplaceOne(ctx, bson.M{"_id": v.ID, "rev": stored.Rev}, v)
		if err != nil {
			return fmt.Errorf("keep version %d of task %s: %w", h.Latest, h.ID, err)
		}
		if res.MatchedCount == 1 {
			return nil
		}
	}
	return apperr.New(apperr.ConcurrentModification, "Task '%s' is being changed by others; try again.", h.Name)
}

// DeleteTask removes the head, then the versions of that incarnation. Versions left by a
// crash in between are unreachable (a new task of the name gets a new incarnation).
func (s *Tasks) DeleteTask(ctx context.Context, ref domain.Ref) error {
	for range maxAttempts {
		h, err := s.head(ctx, ref)
		if err != nil {
			return err
		}
		res, err := s.heads.DeleteOne(ctx, bson.M{"_id": h.ID, mongox.VersionField: h.Rev})
		if err != nil {
			return fmt.Errorf("delete task %s: %w", ref, err)
		}
		if res.DeletedCount == 0 {
			continue // changed meanwhile: judge the current head
		}
		if _, err := s.versions.DeleteMany(ctx, bson.M{"head": h.ID, "incarnation": h.Incarnation}); err != nil {
			return fmt.Errorf("delete versions of task %s: %w", ref, err)
		}
		return nil
	}
	return apperr.New(apperr.ConcurrentModification, "Task '%s' is being changed by others; try again.", ref.Name)
}

// DeleteTeamTasks removes the tasks of team created before the given time, each head
// before its versions.
func (s *Tasks) DeleteTeamTasks(ctx context.Context, team string, before time.Time) (int, error) {
	cur, err := s.heads.Find(ctx, bson.M{"scope": string(domain.ScopeTeam), "team": team, "creationDate": bson.M{"$lt": before}},
		options.Find().SetProjection(bson.M{"_id": 1, "incarnation": 1}))
	if err != nil {
		return 0, fmt.Errorf("find tasks of team %s: %w", team, err)
	}
	var docs []headDoc
	if err := cur.All(ctx, &docs); err != nil {
		return 0, fmt.Errorf("read tasks of team %s: %w", team, err)
	}
	for _, h := range docs {
		if _, err := s.heads.DeleteOne(ctx, bson.M{"_id": h.ID}); err != nil {
			return 0, fmt.Errorf("delete task %s: %w", h.ID, err)
		}
		if _, err := s.versions.DeleteMany(ctx, bson.M{"head": h.ID, "incarnation": h.Incarnation}); err != nil {
			return 0, fmt.Errorf("delete versions of task %s: %w", h.ID, err)
		}
	}
	return len(docs), nil
}

// FindTasks returns one page of latest versions matching f, ordered by creation date.
func (s *Tasks) FindTasks(ctx context.Context, f domain.Filter, p page.Request) ([]domain.Task, int64, error) {
	filter := bson.M{"scope": string(f.Scope)}
	if f.Scope == domain.ScopeTeam {
		filter["team"] = bson.M{"$in": f.Teams}
	}
	if len(f.Names) > 0 {
		filter["name"] = bson.M{"$in": f.Names}
	}
	if len(f.Statuses) > 0 {
		filter["status"] = bson.M{"$in": f.Statuses}
	}
	if len(f.Labels) > 0 {
		filter["labelPairs"] = bson.M{"$all": labelPairs(f.Labels)}
	}
	total, err := s.heads.CountDocuments(ctx, filter)
	if err != nil {
		return nil, 0, fmt.Errorf("count tasks: %w", err)
	}
	dir := 1
	if p.Desc {
		dir = -1
	}
	opts := options.Find().
		SetSort(bson.D{{Key: "creationDate", Value: dir}, {Key: "_id", Value: dir}}).
		SetSkip(p.Offset()).SetLimit(int64(p.Size)).
		SetProjection(bson.M{"body": 1})
	cur, err := s.heads.Find(ctx, filter, opts)
	if err != nil {
		return nil, 0, fmt.Errorf("find tasks: %w", err)
	}
	var docs []headDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, 0, fmt.Errorf("read tasks: %w", err)
	}
	out := make([]domain.Task, len(docs))
	for i, d := range docs {
		if out[i], err = s.decode(d.Body); err != nil {
			return nil, 0, err
		}
	}
	return out, total, nil
}
