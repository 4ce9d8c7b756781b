package mongostore

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
	if err := s.counters.FindOne(ctx, bson.M{"_id": monthID(team, month)}).Decode(&monthly); err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
		return u, fmt.Errorf("read monthly runs of %s: %w", team, err)
	}
	u.Concurrent, u.Monthly = concurrent, monthly.N
	return u, nil
}

// A month's counter document is {_id: "month/<team>/<month>", n, held: {<run id>: <when
// counted>}}: n counts the runs of the month, and held names those among them whose runs
// are not known stored yet. A count is held from the write that makes it, so a submit that
// fails or dies between counting and storing its run leaves a trace that gives the count
// back (GiveBackMonthly, from the submit or the reconciler), and unheld by the next write
// of the document after the run is stored (RunStored): no write of its own per run.

// monthID is the counter document of team's month.
func monthID(team, month string) string { return "month/" + team + "/" + month }

// heldField is the field holding run's count in a counter document.
func heldField(run string) string { return "held." + run }

// CountMonthly counts run against team's month unless max are counted; false at the
// limit.
func (s *Store) CountMonthly(ctx context.Context, team, month, run string, max int) (bool, error) {
	r := s.countMonthly.Do(ctx, monthly{id: monthID(team, month), max: max, run: run})
	if r.err != nil {
		return false, fmt.Errorf("count a run of %s: %w", team, r.err)
	}
	return r.ok, nil
}

// monthly is one run to count against a team's month.
type monthly struct {
	id, run string
	max     int
}

// monthLimit is a counter document and the limit counted against it.
type monthLimit struct {
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
	groups := map[monthLimit][]int{}
	for i, r := range reqs {
		m := monthLimit{id: r.id, max: r.max}
		groups[m] = append(groups[m], i)
	}
	for m, idx := range groups {
		if len(idx) > 1 {
			runs := make([]string, len(idx))
			for j, i := range idx {
				runs[j] = reqs[i].run
			}
			if ok, err := s.countRuns(ctx, m, runs); ok || err != nil {
				for _, i := range idx {
					out[i] = monthlyResult{ok: ok, err: err}
				}
				continue
			}
		}
		for _, i := range idx {
			ok, err := s.countRuns(ctx, m, []string{reqs[i].run})
			out[i] = monthlyResult{ok: ok, err: err}
		}
	}
	return out
}

// countRuns counts runs against m's limit, all or none, each held; false when they do not
// fit. The same write unholds the runs stored since the document's last write.
func (s *Store) countRuns(ctx context.Context, m monthLimit, runs []string) (bool, error) {
	if len(runs) > m.max {
		return false, nil
	}
	now := time.Now()
	set := bson.M{}
	for _, r := range runs {
		set[heldField(r)] = now
	}
	update := bson.M{"$inc": bson.M{"n": len(runs)}, "$set": set}
	stored := s.takeStored(m.id, set)
	if len(stored) > 0 {
		update["$unset"] = stored
	}
	_, err := s.counters.UpdateOne(ctx, bson.M{"_id": m.id, "n": bson.M{"$lte": m.max - len(runs)}},
		update, options.UpdateOne().SetUpsert(true))
	ok := err == nil
	if mongox.IsDuplicateKey(err) {
		// The filter missed an existing document: the month has no room for them.
		err = nil
	}
	if !ok {
		s.putStored(m.id, stored)
	}
	return ok, err
}

// CountMonthlyOnce counts run unless its count is held already, which it then takes as
// its own.
func (s *Store) CountMonthlyOnce(ctx context.Context, team, month, run string, max int) (ok, added bool, err error) {
	id := monthID(team, month)
	if max < 1 {
		return false, false, nil
	}
	_, err = s.counters.UpdateOne(ctx, bson.M{"_id": id, "n": bson.M{"$lte": max - 1}, heldField(run): bson.M{"$exists": false}},
		bson.M{"$inc": bson.M{"n": 1}, "$set": bson.M{heldField(run): time.Now()}}, options.UpdateOne().SetUpsert(true))
	if err == nil {
		return true, true, nil
	}
	if !mongox.IsDuplicateKey(err) {
		return false, false, fmt.Errorf("count run %s of %s: %w", run, team, err)
	}
	// The document is there: it holds run's count already, or has no room.
	n, err := s.counters.CountDocuments(ctx, bson.M{"_id": id, heldField(run): bson.M{"$exists": true}})
	if err != nil {
		return false, false, fmt.Errorf("read run %s's count of %s: %w", run, team, err)
	}
	return n == 1, false, nil
}

// RunStored notes that run is stored, for the next write of its month's counter to unhold.
func (s *Store) RunStored(_ context.Context, team, month, run string) error {
	s.putStored(monthID(team, month), bson.M{heldField(run): ""})
	return nil
}

// takeStored takes the fields of the runs stored noted for counter document id, leaving
// those in skip, which the caller writes otherwise.
func (s *Store) takeStored(id string, skip bson.M) bson.M {
	s.storedMu.Lock()
	defer s.storedMu.Unlock()
	out := bson.M{}
	for f := range s.stored[id] {
		if _, ok := skip[f]; !ok {
			out[f] = ""
			delete(s.stored[id], f)
		}
	}
	if len(s.stored[id]) == 0 {
		delete(s.stored, id)
	}
	return out
}

// putStored notes the fields of stored runs for counter document id.
func (s *Store) putStored(id string, fields bson.M) {
	if len(fields) == 0 {
		return
	}
	s.storedMu.Lock()
	defer s.storedMu.Unlock()
	if s.stored == nil {
		s.stored = map[string]map[string]bool{}
	}
	if s.stored[id] == nil {
		s.stored[id] = map[string]bool{}
	}
	for f := range fields {
		s.stored[id][f] = true
	}
}

// SettleMonthly unholds, one write per counter document, the stored runs no count has
// unheld yet.
func (s *Store) SettleMonthly(ctx context.Context) error {
	s.storedMu.Lock()
	ids := make([]string, 0, len(s.stored))
	for id := range s.stored {
		ids = append(ids, id)
	}
	s.storedMu.Unlock()
	var errs []error
	for _, id := range ids {
		fields := s.takeStored(id, nil)
		if len(fields) == 0 {
			continue
		}
		if _, err := s.counters.UpdateOne(ctx, bson.M{"_id": id}, bson.M{"$unset": fields}); err != nil {
			s.putStored(id, fields)
			errs = append(errs, fmt.Errorf("unhold the stored runs of %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// GiveBackMonthly uncounts run from team's month if its count is still held.
func (s *Store) GiveBackMonthly(ctx context.Context, team, month, run string) (bool, error) {
	res, err := s.counters.UpdateOne(ctx, bson.M{"_id": monthID(team, month), heldField(run): bson.M{"$exists": true}},
		bson.M{"$inc": bson.M{"n": -1}, "$unset": bson.M{heldField(run): ""}})
	if err != nil {
		return false, fmt.Errorf("give back run %s's count of %s: %w", run, team, err)
	}
	return res.MatchedCount == 1, nil
}

// HeldMonthly lists the counts held since before before, in every month's counter.
func (s *Store) HeldMonthly(ctx context.Context, before time.Time) ([]domain.HeldCount, error) {
	cur, err := s.counters.Find(ctx, bson.M{"held": bson.M{"$exists": true}},
		options.Find().SetProjection(bson.M{"held": 1}))
	if err != nil {
		return nil, fmt.Errorf("find held monthly counts: %w", err)
	}
	var docs []struct {
		ID   string               `bson:"_id"`
		Held map[string]time.Time `bson:"held"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read held monthly counts: %w", err)
	}
	var out []domain.HeldCount
	for _, d := range docs {
		if len(d.Held) == 0 {
			// Nothing held since the last look: drop the empty field, unless a count came
			// meanwhile, so the next look skips the document.
			if _, err := s.counters.UpdateOne(ctx, bson.M{"_id": d.ID, "held": bson.M{}}, bson.M{"$unset": bson.M{"held": ""}}); err != nil {
				return nil, fmt.Errorf("drop the empty held counts of %s: %w", d.ID, err)
			}
			continue
		}
		rest := strings.TrimPrefix(d.ID, "month/")
		i := strings.LastIndexByte(rest, '/')
		if i < 0 {
			continue
		}
		for run, since := range d.Held {
			if since.Before(before) {
				out = append(out, domain.HeldCount{Team: rest[:i], Month: rest[i+1:], Run: run, Since: since})
			}
		}
	}
	return out, nil
}

// KeyTTL is how long an idempotency key names its run.
const KeyTTL = 24 * time.Hour

// HoldKey reserves an idempotency key for run; it returns the run that holds the key,
// which is run unless the key was used in the last KeyTTL.
func (s *Store) HoldKey(ctx context.Context, key, run string, now time.Time) (string, error) {
	// A key held already is read, not written: a request sent again (its sender's answer
	// lost, or cut by its deadline while the store is loaded) then costs reads alone, and
	// does not queue behind the writes that slowed the first.
	var held struct {
		Run     string    `bson:"run"`
		Created time.Time `bson:"created"`
	}
	err := s.idem.FindOne(ctx, bson.M{"_id": key}).Decode(&held)
	switch {
	case err == nil && !held.Created.Before(now.Add(-KeyTTL)):
		return held.Run, nil
	case err != nil && !errors.Is(err, mongo.ErrNoDocuments):
		return "", fmt.Errorf("read idempotency key: %w", err)
	}
	_, err = s.idem.InsertOne(ctx, bson.M{"_id": key, "run": run, "created": now})
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
