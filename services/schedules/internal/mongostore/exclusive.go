package mongostore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/services/schedules/internal/domain"
)

// The firing path finds schedules by due time and writes them on conditions: a claim's
// on its holder, a save's on the version it read. MongoDB answers both through indexes;
// the embedded FerretDB reads a document by index only when the filter is its _id alone,
// and otherwise reads and decodes the whole collection: with 10,000 schedules every poll
// of the scheduler and every write of a fire read all 10,000. A store that is its
// database's only writer (Exclusive: the standalone process, one schedules replica on its
// embedded database) keeps what those filters look at in memory instead — each
// schedule's team, version, due time and the run a buffered fire waits for, read once
// from the collection, and the claims,
// which only its own scheduler makes — checks the conditions there and writes by _id.
// A claim is then never written: a restart forgets them all, as if their leases had
// lapsed, which is what another replica would see of a replica gone.

// Option tunes a Store.
type Option func(*Store)

// Exclusive tells the store that it is the only writer of its database: the standalone
// process, with one replica of the schedules service on an embedded database.
func Exclusive() Option {
	return func(s *Store) {
		s.lone = &lone{}
		s.lone.replaces = mongox.NewCombiner(maxReplaces, s.replaceAll)
	}
}

// maxReplaces bounds the schedules one command replaces.
const maxReplaces = 100

// stripes is how many locks the ids of an exclusive store's writes share.
const stripes = 64

// claimReaders bound the schedules one claim reads at once.
const claimReaders = 8

// refreshTimeout bounds reading an entry again after a write that failed.
const refreshTimeout = 10 * time.Second

// lone is what an exclusive store keeps of every stored schedule.
type lone struct {
	// writes hold a schedule's write and the check of its condition together, by id.
	writes [stripes]sync.Mutex

	// replaces are the replaces of schedules, made together when they come together: the
	// fires of one instant.
	replaces *mongox.Combiner[scheduleDoc, replaced]

	mu      sync.Mutex
	loaded  bool
	entries map[string]*entry
}

// replaced is what became of one replace: whether it found its document.
type replaced struct {
	matched bool
	err     error
}

// entry is what the conditions and the claims of one schedule look at.
type entry struct {
	team    string
	version int64
	// due is the schedule's domain.Schedule.Due, zero when never.
	due time.Time
	// lastRun is the run of its last fire; buffered whether a fire waits for it to end.
	lastRun  string
	buffered bool
	// claim and leaseUntil are the claim of this replica's scheduler, if any.
	claim      string
	leaseUntil time.Time
	// stale marks an entry that a failed write may have left behind its document: it is
	// read again before it is relied on.
	stale bool
}

func (l *lone) lock(id string) *sync.Mutex {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	mu := &l.writes[h.Sum32()%stripes]
	mu.Lock()
	return mu
}

// load reads what the entries hold from the collection, once.
func (s *Store) load(ctx context.Context) error {
	l := s.lone
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.loaded {
		return nil
	}
	docs, err := mongox.FindAll[scheduleDoc](ctx, s.schedules, bson.M{}, options.Find().SetProjection(entryFields))
	if err != nil {
		return fmt.Errorf("read the schedules' due times: %w", err)
	}
	l.entries = make(map[string]*entry, len(docs))
	for _, d := range docs {
		l.entries[d.ID] = entryOf(d)
	}
	l.loaded = true
	return nil
}

// entryFields are the fields of a document its entry holds.
var entryFields = bson.M{"team": 1, "version": 1, "due": 1, "lastRun": 1, "buffered": 1}

// entryOf answers the entry of d, with no claim.
func entryOf(d scheduleDoc) *entry {
	return &entry{team: d.Team, version: d.Version, due: d.Due, lastRun: d.LastRun, buffered: !d.Buffered.IsZero()}
}

// look answers a copy of schedule id's entry, and whether there is one.
func (l *lone) look(id string) (entry, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.entries[id]
	if !ok {
		return entry{}, false
	}
	return *e, true
}

// current answers schedule id's entry, read again first when it is stale; the caller
// holds the id's write lock.
func (s *Store) current(ctx context.Context, id string) (entry, bool, error) {
	e, ok := s.lone.look(id)
	if !ok || !e.stale {
		return e, ok, nil
	}
	if err := s.refresh(ctx, id); err != nil {
		return entry{}, false, err
	}
	e, ok = s.lone.look(id)
	return e, ok, nil
}

// failed follows a write of schedule id that failed: it may have been applied all the
// same (an answer lost), so the entry is read again from the collection, now or, when
// that fails too, at its next use. The caller holds the id's write lock.
func (s *Store) failed(ctx context.Context, id string) {
	l := s.lone
	l.mu.Lock()
	if e, ok := l.entries[id]; ok {
		e.stale, e.claim = true, ""
	} else {
		l.entries[id] = &entry{stale: true}
	}
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
	defer cancel()
	_ = s.refresh(ctx, id)
}

// refresh reads schedule id's entry from the collection, with no claim; the caller holds
// the id's write lock.
func (s *Store) refresh(ctx context.Context, id string) error {
	d, err := mongox.FindOne[scheduleDoc](ctx, s.schedules, bson.M{"_id": id}, options.FindOne().SetProjection(entryFields))
	if err != nil && !errors.Is(err, mongox.ErrNotFound) {
		return fmt.Errorf("read schedule %s: %w", id, err)
	}
	l := s.lone
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		delete(l.entries, id)
		return nil
	}
	l.entries[id] = entryOf(d)
	return nil
}

// set stores schedule id's entry.
func (l *lone) set(id string, e *entry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries[id] = e
}

func (s *Store) createAlone(ctx context.Context, d scheduleDoc) error {
	if err := s.load(ctx); err != nil {
		return err
	}
	defer s.lone.lock(d.ID).Unlock()
	if _, err := s.schedules.InsertOne(ctx, d); err != nil {
		if !mongox.IsDuplicateKey(err) {
			s.failed(ctx, d.ID)
		}
		return err
	}
	s.lone.set(d.ID, entryOf(d))
	return nil
}

// replaceAlone replaces schedule d.ID by d when ok approves of its entry, and answers
// whether it did; the entry then holds d and the claim given.
func (s *Store) replaceAlone(ctx context.Context, d scheduleDoc, ok func(entry) bool, claim string, until time.Time) (bool, error) {
	if err := s.load(ctx); err != nil {
		return false, err
	}
	defer s.lone.lock(d.ID).Unlock()
	if e, found, err := s.current(ctx, d.ID); err != nil || !found || !ok(e) {
		return false, err
	}
	res := s.lone.replaces.Do(ctx, d)
	if res.err != nil {
		s.failed(ctx, d.ID)
		return false, res.err
	}
	if !res.matched {
		return false, nil
	}
	e := entryOf(d)
	e.claim, e.leaseUntil = claim, until
	s.lone.set(d.ID, e)
	return true, nil
}

// replaceAll replaces each of docs by _id, in one command when there are several.
func (s *Store) replaceAll(ctx context.Context, docs []scheduleDoc) []replaced {
	out := make([]replaced, len(docs))
	if len(docs) == 1 {
		res, err := s.schedules.ReplaceOne(ctx, bson.M{"_id": docs[0].ID}, docs[0])
		out[0] = replaced{matched: err == nil && res.MatchedCount == 1, err: err}
		return out
	}
	models := make([]mongo.WriteModel, len(docs))
	for i, d := range docs {
		models[i] = mongo.NewReplaceOneModel().SetFilter(bson.M{"_id": d.ID}).SetReplacement(d)
	}
	res, err := s.schedules.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
	if err == nil && res.MatchedCount == int64(len(docs)) {
		for i := range out {
			out[i].matched = true
		}
		return out
	}
	// Some failed, or found no document (a team deleted meanwhile): which ones, the
	// documents say.
	for i, d := range docs {
		got, ferr := mongox.FindOne[scheduleDoc](ctx, s.schedules, bson.M{"_id": d.ID}, options.FindOne().SetProjection(bson.M{"version": 1}))
		switch {
		case errors.Is(ferr, mongox.ErrNotFound):
		case ferr != nil:
			out[i].err = errors.Join(err, ferr)
		default:
			out[i].matched = got.Version == d.Version
		}
	}
	return out
}

// nudgeAlone is NudgeBuffered on the entries: schedule id is written only when a fire of
// it waits for run, which the run topic announces the end of every run a schedule made.
func (s *Store) nudgeAlone(ctx context.Context, id, run string, now time.Time) (bool, error) {
	if err := s.load(ctx); err != nil {
		return false, err
	}
	defer s.lone.lock(id).Unlock()
	if e, ok, err := s.current(ctx, id); err != nil || !ok || !e.buffered || e.lastRun != run {
		return false, err
	}
	res, err := s.schedules.UpdateOne(ctx, bson.M{"_id": id}, bson.M{"$set": bson.M{"recheck": now, "due": now}})
	if err != nil {
		s.failed(ctx, id)
		return false, err
	}
	if res.MatchedCount == 0 {
		return false, nil
	}
	l := s.lone
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.entries[id]; ok {
		e.due = now
	}
	return true, nil
}

func (s *Store) deleteTeamAlone(ctx context.Context, team string) error {
	if err := s.load(ctx); err != nil {
		return err
	}
	if _, err := s.schedules.DeleteMany(ctx, bson.M{"team": team}); err != nil {
		return err
	}
	l := s.lone
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, e := range l.entries {
		if e.team == team {
			delete(l.entries, id)
		}
	}
	return nil
}

// claimDueAlone is ClaimDue on the entries: the claims are made in memory, and the
// schedules claimed read by _id.
func (s *Store) claimDueAlone(ctx context.Context, token string, horizon, now, until time.Time, limit int) ([]*domain.Schedule, error) {
	if err := s.load(ctx); err != nil {
		return nil, err
	}
	type due struct {
		id string
		at time.Time
	}
	l := s.lone
	var stale []string
	l.mu.Lock()
	for id, e := range l.entries {
		if e.stale {
			stale = append(stale, id)
		}
	}
	l.mu.Unlock()
	for _, id := range stale {
		mu := l.lock(id)
		_, _, err := s.current(ctx, id)
		mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	var got []due
	l.mu.Lock()
	for id, e := range l.entries {
		if !e.due.IsZero() && !e.due.After(horizon) && (e.claim == "" || e.leaseUntil.Before(now)) {
			got = append(got, due{id, e.due})
		}
	}
	slices.SortFunc(got, func(a, b due) int { return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.id, b.id)) })
	got = got[:min(len(got), limit)]
	for _, d := range got {
		e := l.entries[d.id]
		e.claim, e.leaseUntil = token, until
	}
	l.mu.Unlock()

	out := make([]*domain.Schedule, len(got))
	errs := make([]error, len(got))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(claimReaders, len(got)) {
		wg.Go(func() {
			for i := range next {
				out[i], errs[i] = s.readClaimed(ctx, got[i].id, token)
			}
		})
	}
	for i := range got {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(out, func(sch *domain.Schedule) bool { return sch == nil }), nil
}

// readClaimed reads schedule id, claimed for token; nil when it is gone, or was saved
// (letting the claim go) since.
func (s *Store) readClaimed(ctx context.Context, id, token string) (*domain.Schedule, error) {
	d, err := mongox.FindOne[scheduleDoc](ctx, s.schedules, bson.M{"_id": id})
	if errors.Is(err, mongox.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read schedule %s: %w", id, err)
	}
	if e, ok := s.lone.look(id); !ok || e.claim != token || e.version != d.Version {
		return nil, nil
	}
	return s.schedule(d)
}
