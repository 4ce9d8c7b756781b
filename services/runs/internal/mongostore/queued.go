package mongostore

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// queued holds the attempts of `generic` tasks waiting for a worker over HTTP, one
// document each under its attempt id, found by team and queue, oldest first.

type queuedDoc struct {
	ID      string    `bson:"_id"`
	Team    string    `bson:"team"`
	Queue   string    `bson:"queue"`
	Run     string    `bson:"run"`
	TaskRun string    `bson:"taskRun"`
	Attempt int       `bson:"attempt"`
	At      time.Time `bson:"at"`
}

// ensureQueuedIndexes creates the index of FindQueued.
func (s *Store) ensureQueuedIndexes(ctx context.Context) error {
	return mongox.EnsureIndexes(ctx, s.queued, mongo.IndexModel{Keys: bson.D{{Key: "team", Value: 1}, {Key: "queue", Value: 1}, {Key: "at", Value: 1}}})
}

// PutQueued stores queued attempts; one stored already under its id is kept as it is.
func (s *Store) PutQueued(ctx context.Context, qs []domain.QueuedAttempt) error {
	if len(qs) == 0 {
		return nil
	}
	models := make([]mongo.WriteModel, len(qs))
	for i, q := range qs {
		d := queuedDoc{ID: q.ID, Team: q.Team, Queue: q.Queue, Run: q.Run, TaskRun: q.TaskRun, Attempt: q.Attempt, At: q.At}
		models[i] = mongo.NewUpdateOneModel().SetFilter(bson.M{"_id": q.ID}).SetUpdate(bson.M{"$setOnInsert": d}).SetUpsert(true)
	}
	if _, err := s.queued.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false)); err != nil {
		return fmt.Errorf("queue attempts: %w", err)
	}
	return nil
}

// FindQueued answers at most limit attempts waiting in queue of team, oldest first.
func (s *Store) FindQueued(ctx context.Context, team, queue string, limit int) ([]domain.QueuedAttempt, error) {
	docs, err := mongox.FindAll[queuedDoc](ctx, s.queued, bson.M{"team": team, "queue": queue},
		options.Find().SetSort(bson.D{{Key: "at", Value: 1}, {Key: "_id", Value: 1}}).SetLimit(int64(limit)))
	if err != nil {
		return nil, fmt.Errorf("find queued attempts: %w", err)
	}
	out := make([]domain.QueuedAttempt, len(docs))
	for i, d := range docs {
		out[i] = domain.QueuedAttempt{ID: d.ID, Team: d.Team, Queue: d.Queue, Run: d.Run, TaskRun: d.TaskRun, Attempt: d.Attempt, At: d.At.UTC()}
	}
	return out, nil
}

// DeleteQueued deletes the queued attempts of ids; those not stored are no error.
func (s *Store) DeleteQueued(ctx context.Context, ids ...string) error {
	for _, id := range ids {
		// One by _id each: a store that serves only {_id} from an index would scan for $in.
		if _, err := s.queued.DeleteOne(ctx, bson.M{"_id": id}); err != nil {
			return fmt.Errorf("delete queued attempt %s: %w", id, err)
		}
	}
	return nil
}
