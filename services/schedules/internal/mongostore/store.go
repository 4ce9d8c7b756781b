// Package mongostore keeps the schedules service's schedules in MongoDB.
package mongostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/schedules/internal/app"
	"github.com/baton-flow/baton/services/schedules/internal/domain"
)

// Store is app.Store on a database.
type Store struct {
	schedules *mongo.Collection
}

var _ app.Store = (*Store)(nil)

// New returns the store over db.
func New(db *mongo.Database) *Store {
	return &Store{schedules: db.Collection("schedules")}
}

// EnsureIndexes creates the indexes of the query paths.
func (s *Store) EnsureIndexes(ctx context.Context) error {
	return mongox.EnsureIndexes(ctx, s.schedules,
		mongo.IndexModel{Keys: bson.D{{Key: "team", Value: 1}, {Key: "creationDate", Value: 1}, {Key: "_id", Value: 1}}},
		mongo.IndexModel{Keys: bson.D{{Key: "status", Value: 1}, {Key: "next", Value: 1}}})
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
	Created         time.Time         `bson:"creationDate"`
	Version         int64             `bson:"version"`
}

func toDoc(s *domain.Schedule) (scheduleDoc, error) {
	params, err := jsonText(s.Params)
	if err != nil {
		return scheduleDoc{}, fmt.Errorf("params of schedule %s: %w", s.ID, err)
	}
	return scheduleDoc{ID: s.ID, Team: s.Team, Name: s.Name, Description: s.Description, Workflow: s.Workflow,
		Type: string(s.Type), Status: string(s.Status), TriggerDisabled: s.TriggerDisabled, Cron: s.Cron,
		Date: s.Date, Timezone: s.Timezone, Params: params, Labels: s.Labels, Overlap: string(s.Overlap),
		Misfire: string(s.Misfire), CatchupWindow: s.CatchupWindow, Next: s.Next, Last: s.Last,
		Created: s.Created, Version: s.Version}, nil
}

func (d scheduleDoc) schedule() (*domain.Schedule, error) {
	params, err := fromJSONText(d.Params)
	if err != nil {
		return nil, fmt.Errorf("params of schedule %s: %w", d.ID, err)
	}
	return &domain.Schedule{ID: d.ID, Team: d.Team, Name: d.Name, Description: d.Description, Workflow: d.Workflow,
		Type: domain.Type(d.Type), Status: domain.Status(d.Status), TriggerDisabled: d.TriggerDisabled, Cron: d.Cron,
		Date: utc(d.Date), Timezone: d.Timezone, Params: params, Labels: d.Labels, Overlap: domain.OverlapPolicy(d.Overlap),
		Misfire: domain.MisfirePolicy(d.Misfire), CatchupWindow: d.CatchupWindow, Next: utc(d.Next), Last: utc(d.Last),
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
	d, err := toDoc(sch)
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
// embedded database makes by its index, and its team checked here.
func (s *Store) FindSchedule(ctx context.Context, team, id string) (*domain.Schedule, error) {
	d, err := mongox.FindOne[scheduleDoc](ctx, s.schedules, bson.M{"_id": id})
	if errors.Is(err, mongox.ErrNotFound) || err == nil && d.Team != team {
		return nil, apperr.New(apperr.ScheduleNotFound, "Schedule '%s' was not found.", id)
	}
	if err != nil {
		return nil, fmt.Errorf("read schedule %s: %w", id, err)
	}
	return d.schedule()
}

// SaveSchedule stores sch on the version it was read at.
func (s *Store) SaveSchedule(ctx context.Context, sch *domain.Schedule) error {
	d, err := toDoc(sch)
	if err != nil {
		return err
	}
	d.Version = sch.Version + 1
	res, err := s.schedules.ReplaceOne(ctx, bson.M{"_id": sch.ID, "version": sch.Version}, d)
	if err != nil {
		return fmt.Errorf("save schedule %s: %w", sch.ID, err)
	}
	if res.MatchedCount == 0 {
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
	out := make([]*domain.Schedule, 0, len(docs))
	for _, d := range docs {
		sch, err := d.schedule()
		if err != nil {
			return nil, 0, err
		}
		out = append(out, sch)
	}
	return out, total, nil
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
