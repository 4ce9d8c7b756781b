package mongostore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// summaryDoc is the part of a runDoc an insight reads.
type summaryDoc struct {
	ID           string    `bson:"_id"`
	Workflow     string    `bson:"workflow"`
	Status       string    `bson:"status"`
	Phase        string    `bson:"phase"`
	CreationDate time.Time `bson:"creationDate"`
	StartTime    time.Time `bson:"startTime"`
	EndTime      time.Time `bson:"endTime"`
	Duration     int64     `bson:"duration"`
}

var summaryFields = bson.M{"_id": 1, "workflow": 1, "status": 1, "phase": 1,
	"creationDate": 1, "startTime": 1, "endTime": 1, "duration": 1}

func (d summaryDoc) summary(now time.Time) domain.RunSummary {
	r := domain.Run{StartTime: utc(d.StartTime), EndTime: utc(d.EndTime)}
	return domain.RunSummary{ID: d.ID, Workflow: d.Workflow,
		Status: domain.Status(d.Status), CreationDate: d.CreationDate.UTC(), Duration: r.Duration(now)}
}

// Insight aggregates the runs f selects as of now, listing the newest maxRuns of them
// (none when maxRuns is 0).
//
// Runs that ended are counted, summed and ranked in the database: their duration is stored
// when they are archived, so the archive answers a count, a $group for the total and a
// find sorted by duration for the median's neighbourhood. Runs in flight, whose duration
// grows until they end, are read (a few fields each) and merged in: they are the team's
// queue and running runs, not its history.
//
// A run moves to the archive while this reads (inserted there, then removed from the live
// collection), so the archive's queries leave out every run read from the live one: a run
// is counted once, from whichever collection held it when the live one was read.
func (s *Store) Insight(ctx context.Context, f domain.RunFilter, now time.Time, maxRuns int) (domain.Insight, error) {
	var in domain.Insight
	flight, err := s.inFlight(ctx, f, now)
	if err != nil {
		return in, err
	}
	archived := f
	archived.Exclude = make([]string, len(flight))
	durations := make([]int64, len(flight))
	for i, d := range flight {
		archived.Exclude[i] = d.sum.ID
		durations[i] = d.sum.Duration
		in.TotalDuration += d.sum.Duration
		if d.phase == string(domain.PhaseRunning) {
			in.Running++
		}
	}
	ended, total, err := s.endedTotals(ctx, archived)
	if err != nil {
		return in, err
	}
	in.Total = ended + int64(len(flight))
	in.TotalDuration += total
	if in.MedianDuration, err = s.median(ctx, archived, ended, durations); err != nil {
		return in, err
	}
	newest, err := s.newestEnded(ctx, archived, maxRuns)
	if err != nil {
		return in, err
	}
	for _, d := range flight {
		newest = append(newest, d.sum)
	}
	slices.SortFunc(newest, func(a, b domain.RunSummary) int {
		return cmp.Or(b.CreationDate.Compare(a.CreationDate), cmp.Compare(b.ID, a.ID))
	})
	in.Runs = newest[:min(len(newest), maxRuns)]
	return in, nil
}

type flightRun struct {
	sum   domain.RunSummary
	phase string
}

// inFlight reads the runs f selects in the live collection.
func (s *Store) inFlight(ctx context.Context, f domain.RunFilter, now time.Time) ([]flightRun, error) {
	cur, err := s.live.Find(ctx, filterDoc(f), options.Find().SetProjection(summaryFields))
	if err != nil {
		return nil, fmt.Errorf("find runs in flight: %w", err)
	}
	var docs []summaryDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read runs in flight: %w", err)
	}
	out := make([]flightRun, len(docs))
	for i, d := range docs {
		out[i] = flightRun{sum: d.summary(now), phase: d.Phase}
	}
	return out, nil
}

// endedTotals counts the archived runs f selects and sums their durations, in the database.
// The sum is a $group of its own: FerretDB v1 computes only the first of several
// accumulators of one $group and answers 0 for the others.
func (s *Store) endedTotals(ctx context.Context, f domain.RunFilter) (n, total int64, err error) {
	if n, err = s.runs.CountDocuments(ctx, filterDoc(f)); err != nil {
		return 0, 0, fmt.Errorf("count ended runs: %w", err)
	}
	if n == 0 {
		return 0, 0, nil
	}
	cur, err := s.runs.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: filterDoc(f)}},
		{{Key: "$group", Value: bson.M{"_id": nil, "total": bson.M{"$sum": "$duration"}}}},
	})
	if err != nil {
		return 0, 0, fmt.Errorf("sum run durations: %w", err)
	}
	var rows []struct {
		Total int64 `bson:"total"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		return 0, 0, fmt.Errorf("read run durations: %w", err)
	}
	if len(rows) > 0 {
		total = rows[0].Total
	}
	return n, total, nil
}

// median is the median duration of the union of the ended archived runs f selects (n of
// them, ranked in the database) and the durations of runs in flight.
//
// With m runs in flight and the union's middle ranks lo and hi, every archived run ranked
// below lo-m is below the middle whatever the runs in flight are, and none ranked above hi
// can reach it: the archive's ranks lo-m to hi, merged with the runs in flight, hold the
// middle, so one find sorted by duration reads at most m+2 archived runs.
func (s *Store) median(ctx context.Context, f domain.RunFilter, n int64, flight []int64) (int64, error) {
	m := int64(len(flight))
	all := n + m
	if all == 0 {
		return 0, nil
	}
	lo, hi := (all-1)/2, all/2
	skip := max(0, lo-m)
	var window []int64
	if n > 0 {
		cur, err := s.runs.Find(ctx, filterDoc(f), options.Find().
			SetSort(bson.D{{Key: "duration", Value: 1}, {Key: "_id", Value: 1}}).
			SetSkip(skip).SetLimit(hi-skip+1).SetProjection(bson.M{"duration": 1}))
		if err != nil {
			return 0, fmt.Errorf("rank run durations: %w", err)
		}
		var rows []struct {
			Duration int64 `bson:"duration"`
		}
		if err := cur.All(ctx, &rows); err != nil {
			return 0, fmt.Errorf("read ranked run durations: %w", err)
		}
		for _, r := range rows {
			window = append(window, r.Duration)
		}
	}
	merged := append(window, flight...)
	slices.Sort(merged)
	a, b := merged[lo-skip], merged[hi-skip]
	return a + (b-a)/2, nil
}

// newestEnded lists the newest limit archived runs f selects.
func (s *Store) newestEnded(ctx context.Context, f domain.RunFilter, limit int) ([]domain.RunSummary, error) {
	if limit <= 0 {
		return nil, nil // a limit of 0 would be none
	}
	cur, err := s.runs.Find(ctx, filterDoc(f), options.Find().
		SetSort(bson.D{{Key: "creationDate", Value: -1}, {Key: "_id", Value: -1}}).
		SetLimit(int64(limit)).SetProjection(summaryFields))
	if err != nil {
		return nil, fmt.Errorf("find newest runs: %w", err)
	}
	var docs []summaryDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read newest runs: %w", err)
	}
	out := make([]domain.RunSummary, len(docs))
	for i, d := range docs {
		// An archived run's duration is the one stored when it ended.
		out[i] = domain.RunSummary{ID: d.ID, Workflow: d.Workflow,
			Status: domain.Status(d.Status), CreationDate: d.CreationDate.UTC(), Duration: d.Duration}
	}
	return out, nil
}
