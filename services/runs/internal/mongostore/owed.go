package mongostore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"golang.org/x/sync/errgroup"

	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// A run put away keeps the status events it still owes in its archived document (owed),
// with when they were last sent (owedAt, indexed), until they are said to be recorded.
// Every write names the _id alone.

// owedProjection reads what a run put away owes, and nothing else.
var owedProjection = bson.M{"owed": 1, "owedAt": 1}

type owedRunDoc struct {
	ID     string    `bson:"_id"`
	Owed   []owedDoc `bson:"owed"`
	OwedAt time.Time `bson:"owedAt"`
}

// clearReads bounds the runs ClearOwed reads at once.
const clearReads = 8

// ClearOwed drops, from each run put away in recorded, the events of the numbers it holds
// there, and what marks it as owing when none is left.
func (s *Store) ClearOwed(ctx context.Context, recorded map[string]map[int64]bool) error {
	if len(recorded) == 0 {
		return nil
	}
	// One lookup by _id per run, not a find of them all by $in: a store that serves only
	// {_id} from an index (the embedded one) would read every run to answer it.
	docs := make([]owedRunDoc, 0, len(recorded))
	var mu sync.Mutex
	var g errgroup.Group
	g.SetLimit(clearReads)
	for id := range recorded {
		g.Go(func() error {
			d, err := mongox.FindOne[owedRunDoc](ctx, s.runs, bson.M{"_id": id}, options.FindOne().SetProjection(owedProjection))
			if errors.Is(err, mongox.ErrNotFound) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("read the events run %s owes: %w", id, err)
			}
			mu.Lock()
			docs = append(docs, d)
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	var models []mongo.WriteModel
	for _, d := range docs {
		if len(d.Owed) == 0 {
			continue
		}
		left := domain.Unrecorded(fromOwedDocs(d.Owed), recorded[d.ID])
		switch {
		case len(left) == len(d.Owed):
		case len(left) == 0:
			models = append(models, mongo.NewUpdateOneModel().SetFilter(bson.M{"_id": d.ID}).
				SetUpdate(bson.M{"$unset": bson.M{"owed": "", "owedAt": ""}}))
		default:
			models = append(models, mongo.NewUpdateOneModel().SetFilter(bson.M{"_id": d.ID}).
				SetUpdate(bson.M{"$set": bson.M{"owed": toOwedDocs(left)}}))
		}
	}
	if len(models) == 0 {
		return nil
	}
	if _, err := s.runs.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false)); err != nil {
		return fmt.Errorf("drop the recorded events of runs: %w", err)
	}
	return nil
}

// FindOwed answers at most limit runs put away that owe events last sent before before,
// those sent longest ago first.
func (s *Store) FindOwed(ctx context.Context, before time.Time, limit int) ([]domain.OwedRun, error) {
	cur, err := s.runs.Find(ctx, bson.M{"owedAt": bson.M{"$lt": before}},
		options.Find().SetProjection(owedProjection).SetSort(bson.D{{Key: "owedAt", Value: 1}}).SetLimit(int64(limit)))
	if err != nil {
		return nil, fmt.Errorf("find runs that owe events: %w", err)
	}
	var docs []owedRunDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("find runs that owe events: %w", err)
	}
	out := make([]domain.OwedRun, 0, len(docs))
	for _, d := range docs {
		if len(d.Owed) == 0 {
			// Cleared while it was being sent again (DelayOwed): nothing is owed.
			if _, err := s.runs.UpdateOne(ctx, bson.M{"_id": d.ID}, bson.M{"$unset": bson.M{"owedAt": ""}}); err != nil {
				return nil, fmt.Errorf("clear run %s: %w", d.ID, err)
			}
			continue
		}
		out = append(out, domain.OwedRun{Run: d.ID, Owed: fromOwedDocs(d.Owed), At: d.OwedAt.UTC()})
	}
	return out, nil
}

// DelayOwed records that run, put away, sent the events it owes again at.
func (s *Store) DelayOwed(ctx context.Context, run string, at time.Time) error {
	if _, err := s.runs.UpdateOne(ctx, bson.M{"_id": run}, bson.M{"$set": bson.M{"owedAt": at}}); err != nil {
		return fmt.Errorf("delay the events run %s owes: %w", run, err)
	}
	return nil
}
