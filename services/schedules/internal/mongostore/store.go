// Package mongostore keeps the schedules service's schedules in MongoDB.
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
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/schedules/internal/app"
	"github.com/baton-flow/baton/services/schedules/internal/atrest"
	"github.com/baton-flow/baton/services/schedules/internal/domain"
)

// Store is app.Store and app.Claims on a database.
type Store struct {
	schedules *mongo.Collection
	box       secrets.Sealer
}

var (
	_ app.Store  = (*Store)(nil)
	_ app.Claims = (*Store)(nil)
)

// New returns the store over db; box seals the params of schedules at rest.
func New(db *mongo.Database, box secrets.Sealer) *Store {
	return &Store{schedules: db.Collection("schedules"), box: box}
}

// EnsureIndexes creates the indexes of the query and firing paths.
func (s *Store) EnsureIndexes(ctx context.Context) error {
	return mongox.EnsureIndexes(ctx, s.schedules,
		mongo.IndexModel{Keys: bson.D{{Key: "team", Value: 1}, {Key: "creationDate", Value: 1}, {Key: "_id", Value: 1}}},
		mongo.IndexModel{Keys: bson.D{{Key: "team", Value: 1}, {Key: "workflow", Value: 1}}},
		mongo.IndexModel{Keys: bson.D{{Key: "due", Value: 1}}},
		mongo.IndexModel{Keys: bson.D{{Key: "claim", Value: 1}}})
}

// scheduleDoc is a schedule as stored. Params are kept as JSON text: their names are the
// workflow's, free text that field names may not be.
type scheduleDoc struct {
	ID              string            `bson:"_id"`
	Team            string            `bson:"team"`
	Name            string            `bson:"name"`
	Description     string            `bson:"description,omitempty"`
	Workflow        string            `bson:"workflow"`
	Type            string            `bson:"type"`
	Status          string            `bson:"status"`
	TriggerDisabled bool              `bson:"triggerDisabled,omitempty"`
	Cron            string            `bson:"cron,omitempty"`
	Date            time.Time         `bson:"date,omitempty"`
	Timezone        string            `bson:"timezone"`
	Params          string            `bson:"params,omitempty"`
	Labels          map[string]string `bson:"labels,omitempty"`
	Overlap         string            `bson:"overlap"`
	Misfire         string            `bson:"misfire"`
	CatchupWindow   time.Duration     `bson:"catchupWindow,omitempty"`
	Next            time.Time         `bson:"next,omitempty"`
	Last            time.Time         `bson:"last,omitempty"`
	Secret          []string          `bson:"secret,omitempty"`
	CreatedBy       initiatorDoc      `bson:"createdBy"`
	LastRun         string            `bson:"lastRun,omitempty"`
	Pending         []time.Time       `bson:"pending,omitempty"`
	Buffered        time.Time         `bson:"buffered,omitempty"`
	Recheck         time.Time         `bson:"recheck,omitempty"`
	Created         time.Time         `bson:"creationDate"`
	Version         int64             `bson:"version"`
	// Due is when a scheduler must next look at the schedule (domain.Schedule.Due),
	// absent when never; Claim and LeaseUntil are the claim of the replica that holds it.
	// A save by anyone but the holder writes neither, letting the claim go.
	Due        time.Time `bson:"due,omitempty"`
	Claim      string    `bson:"claim,omitempty"`
	LeaseUntil time.Time `bson:"leaseUntil,omitempty"`
}

type initiatorDoc struct {
	Type   string `bson:"type,omitempty"`
	ID     string `bson:"id,omitempty"`
	Name   string `bson:"name,omitempty"`
	Person string `bson:"person,omitempty"`
}

// toDoc answers s as stored, its params sealed: they may hold the workflow's secrets.
func (s *Store) toDoc(sch *domain.Schedule) (scheduleDoc, error) {
	params, err := atrest.SealParams(s.box, sch.Params)
	if err != nil {
		return scheduleDoc{}, fmt.Errorf("params of schedule %s: %w", sch.ID, err)
	}
	b := sch.CreatedBy
	return scheduleDoc{ID: sch.ID, Team: sch.Team, Name: sch.Name, Description: sch.Description, Workflow: sch.Workflow,
		Type: string(sch.Type), Status: string(sch.Status), TriggerDisabled: sch.TriggerDisabled, Cron: sch.Cron,
		Date: sch.Date, Timezone: sch.Timezone, Params: params, Labels: mongox.FieldNames(sch.Labels), Overlap: string(sch.Overlap),
		Misfire: string(sch.Misfire), CatchupWindow: sch.CatchupWindow, Next: sch.Next, Last: sch.Last,
		Secret: sch.Secret, CreatedBy: initiatorDoc{Type: b.Type, ID: b.ID, Name: b.Name, Person: b.Person},
		LastRun: sch.LastRun, Pending: sch.Pending, Buffered: sch.Buffered, Recheck: sch.Recheck,
		Created: sch.Created, Version: sch.Version, Due: sch.Due()}, nil
}

func (s *Store) schedule(d scheduleDoc) (*domain.Schedule, error) {
	params, err := atrest.OpenParams(s.box, d.Params)
	if err != nil {
		return nil, fmt.Errorf("params of schedule %s: %w", d.ID, err)
	}
	var pending []time.Time
	for _, t := range d.Pending {
		pending = append(pending, t.UTC())
	}
	b := d.CreatedBy
	return &domain.Schedule{ID: d.ID, Team: d.Team, Name: d.Name, Description: d.Description, Workflow: d.Workflow,
		Type: domain.Type(d.Type), Status: domain.Status(d.Status), TriggerDisabled: d.TriggerDisabled, Cron: d.Cron,
		Date: utc(d.Date), Timezone: d.Timezone, Params: params, Labels: mongox.FieldKeys(d.Labels), Overlap: domain.OverlapPolicy(d.Overlap),
		Misfire: domain.MisfirePolicy(d.Misfire), CatchupWindow: d.CatchupWindow, Next: utc(d.Next), Last: utc(d.Last),
		Secret: d.Secret, CreatedBy: domain.Initiator{Type: b.Type, ID: b.ID, Name: b.Name, Person: b.Person},
		LastRun: d.LastRun, Pending: pending, Buffered: utc(d.Buffered), Recheck: utc(d.Recheck),
		Created: utc(d.Created), Version: d.Version}, nil
}

// utc answers t as the driver reads it back (UTC, milliseconds), zero kept zero.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// CreateSchedule stores a new schedule at version 1.
func (s *Store) CreateSchedule(ctx context.Context, sch *domain.Schedule) error {
	sch.Version = 1
	d, err := s.toDoc(sch)
	if err != nil {
		return err
	}
	if _, err := s.schedules.InsertOne(ctx, d); err != nil {
		if mongox.IsDuplicateKey(err) {
			return fmt.Errorf("create schedule %s: %w", sch.ID, domain.ErrConflict)
		}
		return fmt.Errorf("create schedule %s: %w", sch.ID, err)
	}
	return nil
}

// FindSchedule reads one of team's schedules. It is read by _id alone, the one lookup the
// embedded FerretDB makes by its index, and its team checked here.
func (s *Store) FindSchedule(ctx context.Context, team, id string) (*domain.Schedule, error) {
	d, err := mongox.FindOne[scheduleDoc](ctx, s.schedules, bson.M{"_id": id})
	if errors.Is(err, mongox.ErrNotFound) || err == nil && d.Team != team {
		return nil, apperr.New(apperr.ScheduleNotFound, "Schedule '%s' was not found.", id)
	}
	if err != nil {
		return nil, fmt.Errorf("read schedule %s: %w", id, err)
	}
	return s.schedule(d)
}

// SaveSchedule stores sch on the version it was read at.
func (s *Store) SaveSchedule(ctx context.Context, sch *domain.Schedule) error {
	d, err := s.toDoc(sch)
	if err != nil {
		return err
	}
	d.Version = sch.Version + 1
	// The replacement holds no claim: a save lets the claim go.
	res, err := s.schedules.ReplaceOne(ctx, bson.M{"_id": sch.ID, "version": sch.Version}, d)
	saved := err == nil && res.MatchedCount == 1
	if err != nil {
		return fmt.Errorf("save schedule %s: %w", sch.ID, err)
	}
	if !saved {
		return fmt.Errorf("save schedule %s: %w", sch.ID, domain.ErrConflict)
	}
	sch.Version = d.Version
	return nil
}

// FindSchedules answers one page of the schedules f selects, oldest first.
func (s *Store) FindSchedules(ctx context.Context, f app.Filter, r page.Request) ([]*domain.Schedule, int64, error) {
	filter := bson.M{"team": f.Team}
	in := func(field string, values []string) {
		if len(values) > 0 {
			filter[field] = bson.M{"$in": values}
		}
	}
	in("_id", f.IDs)
	in("status", texts(f.Statuses))
	in("type", texts(f.Types))
	in("workflow", f.Workflows)
	docs, total, err := mongox.FindPage[scheduleDoc](ctx, s.schedules, filter,
		mongox.Sort{Field: "creationDate", Tiebreak: "_id"}, r.Offset(), int64(r.Size))
	if err != nil {
		return nil, 0, err
	}
	out, err := s.scheduleList(docs)
	return out, total, err
}

// DeleteTeamSchedules removes a team's schedules.
func (s *Store) DeleteTeamSchedules(ctx context.Context, team string) error {
	if _, err := s.schedules.DeleteMany(ctx, bson.M{"team": team}); err != nil {
		return fmt.Errorf("delete the schedules of %s: %w", team, err)
	}
	return nil
}

// texts answers values as plain strings.
func texts[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

// lapsed selects schedules no replica holds at now.
func lapsed(now time.Time) bson.M {
	return bson.M{"$or": bson.A{bson.M{"leaseUntil": bson.M{"$lt": now}}, bson.M{"leaseUntil": bson.M{"$exists": false}}}}
}

// ClaimDue claims for token the schedules due by horizon that no replica holds: it picks
// them by the due index, claims those still free in one update, and reads back those the
// token got (another replica may have taken some in between).
func (s *Store) ClaimDue(ctx context.Context, token string, horizon, now, until time.Time, limit int) ([]*domain.Schedule, error) {
	free := lapsed(now)
	filter := bson.M{"due": bson.M{"$lte": horizon}, "$or": free["$or"]}
	ids, err := mongox.FindAll[struct {
		ID string `bson:"_id"`
	}](ctx, s.schedules, filter, options.Find().SetSort(bson.D{{Key: "due", Value: 1}}).SetLimit(int64(limit)).SetProjection(bson.M{"_id": 1}))
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	in := make([]string, len(ids))
	for i, d := range ids {
		in[i] = d.ID
	}
	// Due and free again at the update: a save in between may have moved either.
	if _, err := s.schedules.UpdateMany(ctx, bson.M{"_id": bson.M{"$in": in}, "due": bson.M{"$lte": horizon}, "$or": free["$or"]},
		bson.M{"$set": bson.M{"claim": token, "leaseUntil": until}}); err != nil {
		return nil, fmt.Errorf("claim the schedules due: %w", err)
	}
	docs, err := mongox.FindAll[scheduleDoc](ctx, s.schedules, bson.M{"claim": token})
	if err != nil {
		return nil, err
	}
	return s.scheduleList(docs)
}

// Keep stores sch as token's claim holder, keeping the claim until until (let go when
// zero).
func (s *Store) Keep(ctx context.Context, sch *domain.Schedule, token string, until time.Time) error {
	d, err := s.toDoc(sch)
	if err != nil {
		return err
	}
	d.Version = sch.Version + 1
	if !until.IsZero() {
		d.Claim, d.LeaseUntil = token, until
	}
	res, err := s.schedules.ReplaceOne(ctx, bson.M{"_id": sch.ID, "claim": token}, d)
	kept := err == nil && res.MatchedCount == 1
	if err != nil {
		return fmt.Errorf("store schedule %s: %w", sch.ID, err)
	}
	if !kept {
		return fmt.Errorf("store schedule %s: %w", sch.ID, domain.ErrConflict)
	}
	sch.Version = d.Version
	return nil
}

// NudgeBuffered makes schedule id due at now when it keeps a buffered fire behind run.
func (s *Store) NudgeBuffered(ctx context.Context, id, run string, now time.Time) (bool, error) {
	res, err := s.schedules.UpdateOne(ctx, bson.M{"_id": id, "lastRun": run, "buffered": bson.M{"$exists": true}},
		bson.M{"$set": bson.M{"recheck": now, "due": now}})
	if err != nil {
		return false, fmt.Errorf("nudge schedule %s: %w", id, err)
	}
	return res.ModifiedCount > 0, nil
}

// Holds reports whether token still holds its claim of schedule id.
func (s *Store) Holds(ctx context.Context, id, token string) (bool, error) {
	_, err := mongox.FindOne[struct {
		ID string `bson:"_id"`
	}](ctx, s.schedules, bson.M{"_id": id, "claim": token}, options.FindOne().SetProjection(bson.M{"_id": 1}))
	if errors.Is(err, mongox.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the claim of schedule %s: %w", id, err)
	}
	return true, nil
}

// FindWorkflowSchedules answers the schedules of team's workflow, archived ones included.
func (s *Store) FindWorkflowSchedules(ctx context.Context, team, workflow string) ([]*domain.Schedule, error) {
	docs, err := mongox.FindAll[scheduleDoc](ctx, s.schedules, bson.M{"team": team, "workflow": workflow})
	if err != nil {
		return nil, err
	}
	return s.scheduleList(docs)
}

// scheduleList answers docs as schedules.
func (s *Store) scheduleList(docs []scheduleDoc) ([]*domain.Schedule, error) {
	out := make([]*domain.Schedule, 0, len(docs))
	for _, d := range docs {
		sch, err := s.schedule(d)
		if err != nil {
			return nil, err
		}
		out = append(out, sch)
	}
	return out, nil
}
