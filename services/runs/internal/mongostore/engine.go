package mongostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// The engine's bookkeeping lives in small collections read by _id or scanned whole: they
// hold only what is in flight, so a scan stays cheap however many runs have finished.
//
//   - live: the runs in flight, each naming the replica that holds it (see store.go);
//   - replicas: one document per live replica of the service, with its last beat;
//   - counters: per team, the runs holding a concurrency slot and the month's run count;
//   - idempotency: submit keys, expiring after 24 hours.

// inFlightDoc is the part of a run in flight that ListInFlight reads.
type inFlightDoc struct {
	ID        string    `bson:"_id"`
	Team      string    `bson:"team"`
	Owner     string    `bson:"owner"`
	Created   time.Time `bson:"creationDate"`
	Queued    bool      `bson:"queued"`
	Phase     string    `bson:"phase"`
	Ancestors []string  `bson:"ancestors"`
	WakeAt    time.Time `bson:"wakeAt"`
}

// SetQueued marks whether a run in flight waits for a slot. Like a takeover it moves the
// run's version, so a replica holding an older copy reloads before its next step.
func (s *Store) SetQueued(ctx context.Context, id string, queued bool) error {
	if _, err := s.updateIf(ctx, s.live, id, nil, bson.M{"$set": bson.M{"queued": queued}, "$inc": bson.M{"version": 1}}); err != nil {
		return fmt.Errorf("mark run %s queued=%v: %w", id, queued, err)
	}
	return nil
}

// ListInFlight lists the runs in flight f selects.
func (s *Store) ListInFlight(ctx context.Context, f domain.InFlightFilter) ([]domain.InFlight, error) {
	filter := bson.M{}
	switch len(f.Owners) {
	case 0:
	case 1:
		filter["owner"] = f.Owners[0]
	default:
		filter["owner"] = bson.M{"$in": f.Owners}
	}
	if f.Team != "" {
		filter["team"] = f.Team
	}
	if f.Queued {
		filter["queued"] = true
	}
	if f.Children {
		filter["depth"] = bson.M{"$gt": 0}
	}
	if !f.WakeBefore.IsZero() {
		filter["wakeAt"] = bson.M{"$gt": time.Time{}, "$lt": f.WakeBefore}
	}
	cur, err := s.live.Find(ctx, filter, options.Find().SetProjection(bson.M{
		"team": 1, "owner": 1, "creationDate": 1, "queued": 1, "phase": 1, "ancestors": 1, "wakeAt": 1,
	}))
	if err != nil {
		return nil, fmt.Errorf("list active runs: %w", err)
	}
	var docs []inFlightDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read active runs: %w", err)
	}
	out := make([]domain.InFlight, len(docs))
	for i, d := range docs {
		out[i] = domain.InFlight{ID: d.ID, Team: d.Team, Owner: d.Owner, Created: d.Created, Queued: d.Queued,
			Phase: domain.Phase(d.Phase), Ancestors: d.Ancestors, WakeAt: utc(d.WakeAt)}
	}
	return out, nil
}

// FindUnfinished lists the ids of team's runs that are not completed, of workflow when it
// is not empty. (A run that completed stays in flight until it is put away.)
func (s *Store) FindUnfinished(ctx context.Context, team, workflow string) ([]string, error) {
	filter := bson.M{"team": team, "phase": notEnded}
	if workflow != "" {
		filter["workflow"] = workflow
	}
	ids, err := findIDs(ctx, s.live, filter)
	if err != nil {
		return nil, fmt.Errorf("list active runs of %s: %w", team, err)
	}
	return ids, nil
}

// notEnded matches runs that have not completed.
var notEnded = bson.M{"$nin": bson.A{string(domain.Completed), string(domain.Finalized)}}

// FindDescendants lists the ids of the runs in flight, not completed, below run id in its
// tree of child runs: whether the runworkflow tasks that started them wait for them or not.
func (s *Store) FindDescendants(ctx context.Context, id string) ([]string, error) {
	ids, err := findIDs(ctx, s.live, bson.M{"ancestors": id, "phase": notEnded})
	if err != nil {
		return nil, fmt.Errorf("list the runs below %s: %w", id, err)
	}
	return ids, nil
}

// CountDescendants counts the runs below run id in its tree, in flight or ended. A run
// being put away may be counted in both collections for a moment: the limit this serves
// then holds one run early, never late.
func (s *Store) CountDescendants(ctx context.Context, id string) (int64, error) {
	var n int64
	for _, coll := range []*mongo.Collection{s.live, s.runs} {
		c, err := coll.CountDocuments(ctx, bson.M{"ancestors": id})
		if err != nil {
			return 0, fmt.Errorf("count the runs below %s: %w", id, err)
		}
		n += c
	}
	return n, nil
}

// FindStopped answers which of the runs ids ended cancelled or timed out, wherever they
// are (in flight still, or in the archive).
func (s *Store) FindStopped(ctx context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	filter := bson.M{"_id": bson.M{"$in": ids}, "phase": bson.M{"$in": bson.A{string(domain.Completed), string(domain.Finalized)}},
		"status": bson.M{"$in": bson.A{string(domain.Cancelled), string(domain.TimedOut)}}}
	for _, coll := range []*mongo.Collection{s.live, s.runs} {
		found, err := findIDs(ctx, coll, filter)
		if err != nil {
			return nil, fmt.Errorf("find stopped runs: %w", err)
		}
		for _, id := range found {
			out[id] = true
		}
	}
	return out, nil
}

// TakeOver moves a run in flight from a dead replica to owner; false when another replica
// took it first.
func (s *Store) TakeOver(ctx context.Context, id, from, owner string) (bool, error) {
	ok, err := s.updateIf(ctx, s.live, id, bson.M{"owner": from}, bson.M{"$set": bson.M{"owner": owner}, "$inc": bson.M{"version": 1}})
	if err != nil {
		return false, fmt.Errorf("take over run %s: %w", id, err)
	}
	return ok, nil
}

// MarkAlive records that replica was alive at.
func (s *Store) MarkAlive(ctx context.Context, replica string, at time.Time) error {
	_, err := s.replicas.UpdateOne(ctx, bson.M{"_id": replica}, bson.M{"$set": bson.M{"seen": at}}, options.UpdateOne().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("beat replica %s: %w", replica, err)
	}
	return nil
}

// Replicas returns when each replica last beat.
func (s *Store) Replicas(ctx context.Context) (map[string]time.Time, error) {
	cur, err := s.replicas.Find(ctx, bson.M{})
	if err != nil {
		return nil, fmt.Errorf("list replicas: %w", err)
	}
	var rows []struct {
		ID   string    `bson:"_id"`
		Seen time.Time `bson:"seen"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		return nil, fmt.Errorf("read replicas: %w", err)
	}
	out := make(map[string]time.Time, len(rows))
	for _, r := range rows {
		out[r.ID] = r.Seen
	}
	return out, nil
}

// ForgetReplica removes a dead replica once its runs moved.
func (s *Store) ForgetReplica(ctx context.Context, replica string) error {
	_, err := s.replicas.DeleteOne(ctx, bson.M{"_id": replica})
	return err
}

// Usage reads team's counters for month ("2006-01").
func (s *Store) Usage(ctx context.Context, team, month string) (domain.QuotaUsage, error) {
	var u domain.QuotaUsage
	concurrent, err := s.SlotsTaken(ctx, team)
	if err != nil {
		return u, err
	}
	var monthly struct {
		N int `bson:"n"`
	}
	if err := s.counters.FindOne(ctx, bson.M{"_id": "month/" + team + "/" + month}).Decode(&monthly); err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
		return u, fmt.Errorf("read monthly runs of %s: %w", team, err)
	}
	u.Concurrent, u.Monthly = concurrent, monthly.N
	return u, nil
}

// CountMonthly counts one more run of team in month unless max are counted; false at the
// limit.
func (s *Store) CountMonthly(ctx context.Context, team, month string, max int) (bool, error) {
	r := s.countMonthly.Do(ctx, monthly{id: "month/" + team + "/" + month, max: max})
	if r.err != nil {
		return false, fmt.Errorf("count a run of %s: %w", team, r.err)
	}
	return r.ok, nil
}

// monthly is one run to count against a team's month.
type monthly struct {
	id  string
	max int
}

type monthlyResult struct {
	ok  bool
	err error
}

// countMonthlies counts runs, those of one month and limit with one write when all fit
// under it, else one by one.
func (s *Store) countMonthlies(ctx context.Context, reqs []monthly) []monthlyResult {
	out := make([]monthlyResult, len(reqs))
	groups := map[monthly][]int{}
	for i, r := range reqs {
		groups[r] = append(groups[r], i)
	}
	for m, idx := range groups {
		if len(idx) > 1 {
			if ok, err := s.countRuns(ctx, m, len(idx)); ok || err != nil {
				for _, i := range idx {
					out[i] = monthlyResult{ok: ok, err: err}
				}
				continue
			}
		}
		for _, i := range idx {
			ok, err := s.countRuns(ctx, m, 1)
			out[i] = monthlyResult{ok: ok, err: err}
		}
	}
	return out
}

// countRuns counts n runs against m's limit, all or none; false when they do not fit.
func (s *Store) countRuns(ctx context.Context, m monthly, n int) (bool, error) {
	if n > m.max {
		return false, nil
	}
	_, err := s.counters.UpdateOne(ctx, bson.M{"_id": m.id, "n": bson.M{"$lte": m.max - n}},
		bson.M{"$inc": bson.M{"n": n}}, options.UpdateOne().SetUpsert(true))
	if mongox.IsDuplicateKey(err) {
		// The filter missed an existing document: the month has no room for n more.
		return false, nil
	}
	return err == nil, err
}

// KeyTTL is how long an idempotency key names its run.
const KeyTTL = 24 * time.Hour

// HoldKey reserves an idempotency key for run; it returns the run that holds the key,
// which is run unless the key was used in the last KeyTTL.
func (s *Store) HoldKey(ctx context.Context, key, run string, now time.Time) (string, error) {
	_, err := s.idem.InsertOne(ctx, bson.M{"_id": key, "run": run, "created": now})
	if err == nil {
		return run, nil
	}
	if !mongox.IsDuplicateKey(err) {
		return "", fmt.Errorf("hold idempotency key: %w", err)
	}
	// An expired key is taken over, conditionally, so two late submits still agree.
	res, err := s.idem.UpdateOne(ctx, bson.M{"_id": key, "created": bson.M{"$lt": now.Add(-KeyTTL)}},
		bson.M{"$set": bson.M{"run": run, "created": now}})
	if err != nil {
		return "", fmt.Errorf("renew idempotency key: %w", err)
	}
	if res.MatchedCount == 1 {
		return run, nil
	}
	var held struct {
		Run string `bson:"run"`
	}
	if err := s.idem.FindOne(ctx, bson.M{"_id": key}).Decode(&held); err != nil {
		return "", fmt.Errorf("read idempotency key: %w", err)
	}
	return held.Run, nil
}

// PurgeKeys deletes idempotency keys older than KeyTTL.
func (s *Store) PurgeKeys(ctx context.Context, now time.Time) error {
	if _, err := s.idem.DeleteMany(ctx, bson.M{"created": bson.M{"$lt": now.Add(-KeyTTL)}}); err != nil {
		return fmt.Errorf("purge idempotency keys: %w", err)
	}
	return nil
}
