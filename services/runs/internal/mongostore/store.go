package mongostore

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Runs in flight live apart from runs that have ended. A step's writes go to the live
// collections only, which hold what is in flight and so stay small however many runs have
// ended: on the embedded FerretDB every write on a condition beyond _id (a version) reads
// its whole collection, while inserts, and reads and writes by _id alone, do not. When a
// run ends it is copied to the archive collections (inserts) and removed from the live
// ones.
//
//   - live, pages_NN:   runs in flight (owner and queued included) and their task-run
//     pages, spread over pageShards collections by run id: a step's conditional page
//     write reads one shard, not the pages of every run in flight;
//   - runs, taskpages:  runs that ended, and their pages;
//   - definitions:      the workflow versions runs run, each written once and shared;
//   - logs:             task-run log chunks, written once each;
//   - heartbeats:       the last heartbeat of each running task run, by task-run id;
//   - actions, actionwrites, unapplied: the actions of approval and manual tasks (see
//     actions.go);
//   - locks:            the teams' named locks in use (see locks.go);
//   - queued:           the attempts of generic tasks waiting for a worker over HTTP
//     (see queued.go).
//
// A run put away before its last status events were said to be recorded downstream keeps
// them in its archived document (owed, and owedAt: when they were last sent) until they
// are (see owed.go).

// PageSize is how many task runs share a page.
const PageSize = 64

// Store is the runs database.
type Store struct {
	live, runs, archivedPages            *mongo.Collection
	pages                                [pageShards]*mongo.Collection
	defs, logs, replicas, counters, idem *mongo.Collection
	slots                                *mongo.Collection
	beats                                *mongo.Collection
	actions, actionWrites, unapplied     *mongo.Collection
	locks                                *mongo.Collection
	queued                               *mongo.Collection
	box                                  Sealer
	// slotLocks take the slot calls of one run one at a time (see slots.go).
	slotLocks idLocks

	// Documents known to exist, so their writes are not repeated: definition ids and
	// teams' slot documents. Neither is ever deleted.
	storedDefs, slotDocs sync.Map

	// The creates of runs in flight and of runs that ended within their first step, and
	// the monthly counts of new runs, each written together with those asked meanwhile.
	createLive, createArchived *mongox.Combiner[creation, error]
	countMonthly               *mongox.Combiner[monthly, monthlyResult]

	// stored are the runs whose monthly counts are held though the runs are stored, by
	// counter document: the next write of that document, or SettleMonthly, unholds them.
	storedMu sync.Mutex
	stored   map[string]map[string]bool
}

// New returns the store over db. box seals, for storage, every value a run holds that came
// from a secret, and opens them on reading (see seal.go).
func New(db *mongo.Database, box Sealer) *Store {
	s := &Store{
		box:  box,
		live: db.Collection("live"),
		runs: db.Collection("runs"), archivedPages: db.Collection("taskpages"),
		defs: db.Collection("definitions"), logs: db.Collection("logs"),
		replicas: db.Collection("replicas"), counters: db.Collection("counters"), idem: db.Collection("idempotency"),
		slots:   db.Collection("slots"),
		beats:   db.Collection("heartbeats"),
		actions: db.Collection("actions"), actionWrites: db.Collection("actionwrites"), unapplied: db.Collection("unapplied"),
		locks: db.Collection("locks"), queued: db.Collection("queued"),
	}
	for i := range s.pages {
		s.pages[i] = db.Collection(fmt.Sprintf("pages_%02d", i))
	}
	s.createLive = mongox.NewCombiner(combineMax, func(ctx context.Context, cs []creation) []error { return createRuns(ctx, s.live, cs) })
	s.createArchived = mongox.NewCombiner(combineMax, func(ctx context.Context, cs []creation) []error { return createRuns(ctx, s.runs, cs) })
	s.countMonthly = mongox.NewCombiner(combineMax, s.countMonthlies)
	return s
}

// combineMax bounds how many callers' writes go together.
const combineMax = 32

// pageShards is how many collections the pages of runs in flight are spread over.
const pageShards = 16

// livePages is the collection of run's pages while it is in flight.
func (s *Store) livePages(run string) *mongo.Collection {
	h := fnv.New32a()
	_, _ = h.Write([]byte(run))
	return s.pages[h.Sum32()%pageShards]
}

// EnsureIndexes creates the indexes of the query paths.
func (s *Store) EnsureIndexes(ctx context.Context) error {
	var errs []error
	for _, coll := range []*mongo.Collection{s.live, s.runs} {
		errs = append(errs,
			mongox.EnsureIndexes(ctx, coll, mongo.IndexModel{Keys: bson.D{{Key: "team", Value: 1}, {Key: "creationDate", Value: 1}, {Key: "_id", Value: 1}}}),
			mongox.EnsureIndexes(ctx, coll, mongo.IndexModel{Keys: bson.D{{Key: "team", Value: 1}, {Key: "workflow", Value: 1}, {Key: "creationDate", Value: 1}}}))
	}
	// The engine asks for the runs in flight of a replica (a dead one's; its own due
	// soon; its child runs, at every reconcile), and for the queued ones, rarely for all
	// of them.
	errs = append(errs, mongox.EnsureIndexes(ctx, s.live,
		mongo.IndexModel{Keys: bson.D{{Key: "owner", Value: 1}, {Key: "wakeAt", Value: 1}}},
		mongo.IndexModel{Keys: bson.D{{Key: "owner", Value: 1}, {Key: "depth", Value: 1}}},
		mongo.IndexModel{Keys: bson.D{{Key: "queued", Value: 1}, {Key: "team", Value: 1}}}))
	// The runs put away that still owe events, by when they were last sent.
	errs = append(errs, mongox.EnsureIndexes(ctx, s.runs, mongo.IndexModel{Keys: bson.D{{Key: "owedAt", Value: 1}}}))
	errs = append(errs, s.ensureQueuedIndexes(ctx))
	// A team's slots are dropped with the team.
	errs = append(errs, mongox.EnsureIndexes(ctx, s.slots, mongo.IndexModel{Keys: bson.D{{Key: "team", Value: 1}}}))
	errs = append(errs, s.migrateSlots(ctx))
	// The runs a cancel cascades to are found by their ancestors, among the runs in flight.
	errs = append(errs, mongox.EnsureIndexes(ctx, s.live, mongo.IndexModel{Keys: bson.D{{Key: "ancestors", Value: 1}}}))
	// A tree's size, bounded at each child's start, counts its ended runs too.
	errs = append(errs, mongox.EnsureIndexes(ctx, s.runs, mongo.IndexModel{Keys: bson.D{{Key: "ancestors", Value: 1}}}))
	// Keys expire by PurgeKeys rather than a TTL index, which FerretDB does not have.
	errs = append(errs, mongox.EnsureIndexes(ctx, s.idem, mongo.IndexModel{Keys: bson.D{{Key: "created", Value: 1}}}))
	// A team's searches of actions, by each order they take; a run's actions. The
	// unapplied ones are read from their own small collection, whole.
	errs = append(errs, mongox.EnsureIndexes(ctx, s.actions,
		mongo.IndexModel{Keys: bson.D{{Key: "team", Value: 1}, {Key: "creationDate", Value: 1}, {Key: "_id", Value: 1}}},
		mongo.IndexModel{Keys: bson.D{{Key: "team", Value: 1}, {Key: "workflow", Value: 1}, {Key: "creationDate", Value: 1}}},
		mongo.IndexModel{Keys: bson.D{{Key: "team", Value: 1}, {Key: "workflowName", Value: 1}, {Key: "_id", Value: 1}}},
		mongo.IndexModel{Keys: bson.D{{Key: "team", Value: 1}, {Key: "status", Value: 1}, {Key: "_id", Value: 1}}},
		mongo.IndexModel{Keys: bson.D{{Key: "runId", Value: 1}, {Key: "creationDate", Value: 1}}}))
	// A team's delete reaches the versions and marks of its actions by team.
	for _, coll := range []*mongo.Collection{s.actionWrites, s.unapplied} {
		errs = append(errs, mongox.EnsureIndexes(ctx, coll, mongo.IndexModel{Keys: bson.D{{Key: "team", Value: 1}}}))
	}
	// The locks a run holds or waits for, those not told, a team's.
	errs = append(errs, mongox.EnsureIndexes(ctx, s.locks,
		mongo.IndexModel{Keys: bson.D{{Key: "holder.run", Value: 1}}},
		mongo.IndexModel{Keys: bson.D{{Key: "queue.run", Value: 1}}},
		mongo.IndexModel{Keys: bson.D{{Key: "notified", Value: 1}}},
		mongo.IndexModel{Keys: bson.D{{Key: "team", Value: 1}}}))
	return errors.Join(errs...)
}

func notFound(id string) error {
	return apperr.New(apperr.WorkflowRunNotFound, "Workflow run '%s' was not found.", id)
}

func pageID(run string, p int) string { return run + "/" + strconv.Itoa(p) }

func pageCount(tasks int) int { return (tasks + PageSize - 1) / PageSize }

// pageOf builds page p of tasks, at version.
func pageOf(run string, tasks []*domain.TaskRun, p int, version int64, box Sealer) pageDoc {
	d := pageDoc{ID: pageID(run, p), RunID: run, Version: version}
	for _, t := range tasks[p*PageSize : min(len(tasks), (p+1)*PageSize)] {
		d.Packed = append(d.Packed, toTaskDoc(t, box))
	}
	return d
}

// CreateRun stores a new run: its definition and pages first, then the run, so a run that
// exists has all its parts. A run in flight goes to the live collections; one that ended
// within its first step (all its tasks inline) goes straight to the archive.
func (s *Store) CreateRun(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun) error {
	if err := s.storeDefinition(ctx, r); err != nil {
		return err
	}
	create, pages := s.createLive, s.livePages(r.ID)
	if r.Phase.Ended() {
		create, pages = s.createArchived, s.archivedPages
		r.Owner, r.Queued = "", false
	}
	return create.Do(ctx, creation{run: toRunDoc(r, s.box), pages: pages, docs: pageDocs(r.ID, tasks, s.box)})
}

// pageDocs builds every page of tasks, each at the version its task runs have.
func pageDocs(run string, tasks []*domain.TaskRun, box Sealer) []any {
	docs := make([]any, 0, pageCount(len(tasks)))
	for p := range pageCount(len(tasks)) {
		docs = append(docs, pageOf(run, tasks, p, tasks[p*PageSize].Version, box))
	}
	return docs
}

// creation is a run to insert with its task-run pages, into pages.
type creation struct {
	run   runDoc
	pages *mongo.Collection
	docs  []any
}

// createRuns inserts runs into coll with their pages: all the pages first, then the runs
// whose pages are in, in commands of at most maxBatch documents. It answers each run's
// error; a run inserted before is ErrConflict, pages inserted before are taken as they
// are (a create retried after a crash).
func createRuns(ctx context.Context, coll *mongo.Collection, cs []creation) []error {
	errs := make([]error, len(cs))
	byColl := map[*mongo.Collection][]int{}
	for i, c := range cs {
		byColl[c.pages] = append(byColl[c.pages], i)
	}
	for pages, runs := range byColl {
		var docs []any
		var of []int // the run of each page
		for _, i := range runs {
			docs = append(docs, cs[i].docs...)
			for range cs[i].docs {
				of = append(of, i)
			}
		}
		insertAll(ctx, pages, docs, func(k int, err error, dup bool) {
			if !dup {
				errs[of[k]] = fmt.Errorf("insert task runs of %s: %w", cs[of[k]].run.ID, err)
			}
		})
	}
	var docs []any
	var of []int
	for i, c := range cs {
		if errs[i] == nil {
			docs = append(docs, c.run)
			of = append(of, i)
		}
	}
	insertAll(ctx, coll, docs, func(k int, err error, dup bool) {
		if dup {
			err = domain.ErrConflict
		}
		errs[of[k]] = fmt.Errorf("insert run %s: %w", cs[of[k]].run.ID, err)
	})
	return errs
}

// insertAll inserts docs unordered, maxBatch at a time, and tells failed which failed and
// whether because its _id was taken. A command that fails as a whole, rather than
// document by document, is tried again one document at a time, so each gets its own
// answer.
func insertAll(ctx context.Context, coll *mongo.Collection, docs []any, failed func(k int, err error, dup bool)) {
	for from := 0; from < len(docs); from += maxBatch {
		to := min(len(docs), from+maxBatch)
		_, err := coll.InsertMany(ctx, docs[from:to], options.InsertMany().SetOrdered(false))
		var bw mongo.BulkWriteException
		switch {
		case err == nil:
		case errors.As(err, &bw) && bw.WriteConcernError == nil && len(bw.WriteErrors) > 0:
			for _, we := range bw.WriteErrors {
				failed(from+we.Index, we, we.Code == 11000)
			}
		default:
			for k := from; k < to; k++ {
				if _, err := coll.InsertOne(ctx, docs[k]); err != nil {
					failed(k, err, mongox.IsDuplicateKey(err))
				}
			}
		}
	}
}

// storeDefinition stores r's definition under a name derived from its content, so the runs
// of one workflow version share one document and a run costs no write for it.
func (s *Store) storeDefinition(ctx context.Context, r *domain.Run) error {
	def := withoutSecrets(r.Definition)
	if sealed, ok := sealTaskSecrets(s.box, def); ok {
		// A sealed value differs at every seal, and a digest of the clear text would let
		// its secrets be guessed offline: a definition holding secrets is the run's own.
		r.DefinitionID = "run:" + r.ID
		_, err := s.defs.InsertOne(ctx, bson.M{"_id": r.DefinitionID, "definition": jsonText(sealed)})
		if err != nil && !mongox.IsDuplicateKey(err) {
			return fmt.Errorf("insert definition of %s: %w", r.ID, err)
		}
		return nil
	}
	text := jsonText(def)
	sum := sha256.Sum256([]byte(text))
	r.DefinitionID = "sha256:" + hex.EncodeToString(sum[:])
	if _, known := s.storedDefs.Load(r.DefinitionID); known {
		return nil
	}
	_, err := s.defs.InsertOne(ctx, bson.M{"_id": r.DefinitionID, "definition": text})
	if err != nil && !mongox.IsDuplicateKey(err) {
		return fmt.Errorf("insert definition of %s: %w", r.ID, err)
	}
	s.storedDefs.Store(r.DefinitionID, struct{}{})
	return nil
}

// maxBatch bounds the statements of one write command: the embedded FerretDB keeps a
// connection per statement until the command ends and never answers one of more than
// about 100.
const maxBatch = 50

// bulkWrite applies models in batches of maxBatch and returns how many matched.
func bulkWrite(ctx context.Context, coll *mongo.Collection, models []mongo.WriteModel) (int, error) {
	matched := 0
	for len(models) > 0 {
		n := min(len(models), maxBatch)
		res, err := coll.BulkWrite(ctx, models[:n], options.BulkWrite().SetOrdered(false))
		if err != nil {
			return matched, err
		}
		matched += int(res.MatchedCount)
		models = models[n:]
	}
	return matched, nil
}

// findRunDoc reads a run from the live collection, else the archive.
func (s *Store) findRunDoc(ctx context.Context, id string) (runDoc, bool, error) {
	// Live first, then the archive: a run is copied to the archive before it leaves the
	// live collection, so a read between the two finds it in one or the other.
	for _, coll := range []*mongo.Collection{s.live, s.runs} {
		d, err := mongox.FindOne[runDoc](ctx, coll, bson.M{"_id": id})
		if err == nil {
			return d, coll == s.live, nil
		}
		if !errors.Is(err, mongox.ErrNotFound) {
			return runDoc{}, false, err
		}
	}
	return runDoc{}, false, notFound(id)
}

// FindRun reads a run, without its definition.
func (s *Store) FindRun(ctx context.Context, id string) (*domain.Run, error) {
	d, _, err := s.findRunDoc(ctx, id)
	if err != nil {
		return nil, err
	}
	return d.run(s.box), nil
}

// FindDefinition reads the workflow version r runs.
func (s *Store) FindDefinition(ctx context.Context, r *domain.Run) (*domain.Definition, error) {
	def, err := mongox.FindOne[struct {
		Definition string `bson:"definition"`
	}](ctx, s.defs, bson.M{"_id": cmp.Or(r.DefinitionID, r.ID)})
	if err != nil {
		return nil, fmt.Errorf("definition of run %s: %w", r.ID, err)
	}
	v := fromText[domain.Definition](def.Definition)
	openTaskSecrets(s.box, &v)
	return &v, nil
}

// findPage reads a page of run, live or archived, as the run is.
func (s *Store) findPage(ctx context.Context, r *domain.Run, p int) (pageDoc, error) {
	colls := []*mongo.Collection{s.livePages(r.ID), s.archivedPages}
	if r.Owner == "" {
		colls = []*mongo.Collection{s.archivedPages, s.livePages(r.ID)}
	}
	for _, coll := range colls {
		d, err := mongox.FindOne[pageDoc](ctx, coll, bson.M{"_id": pageID(r.ID, p)})
		if err == nil {
			return d, nil
		}
		if !errors.Is(err, mongox.ErrNotFound) {
			return pageDoc{}, err
		}
	}
	return pageDoc{}, fmt.Errorf("run %s misses task-run page %d", r.ID, p)
}

// FindTaskRuns reads the task runs of r, in definition order.
func (s *Store) FindTaskRuns(ctx context.Context, r *domain.Run) ([]*domain.TaskRun, error) {
	out := make([]*domain.TaskRun, 0, r.Tasks)
	for p := range pageCount(r.Tasks) {
		d, err := s.findPage(ctx, r, p)
		if err != nil {
			return nil, err
		}
		for _, td := range d.taskDocs() {
			t := td.task(s.box)
			t.Version = d.Version
			out = append(out, t)
		}
	}
	if len(out) != r.Tasks {
		return nil, fmt.Errorf("run %s has %d of its %d task runs", r.ID, len(out), r.Tasks)
	}
	return out, nil
}

// FindTaskRun reads one task run.
func (s *Store) FindTaskRun(ctx context.Context, id string) (*domain.TaskRun, error) {
	run, i, ok := domain.ParseTaskRunID(id)
	missing := apperr.New(apperr.TaskRunNotFound, "Task run '%s' was not found.", id)
	if !ok {
		return nil, missing
	}
	r, err := s.FindRun(ctx, run)
	if apperr.HasReason(err, apperr.WorkflowRunNotFound) || (err == nil && i >= r.Tasks) {
		return nil, missing
	}
	if err != nil {
		return nil, err
	}
	d, err := s.findPage(ctx, r, i/PageSize)
	if err != nil {
		return nil, err
	}
	k := i % PageSize
	tds := d.taskDocs()
	if k >= len(tds) {
		return nil, missing
	}
	t := tds[k].task(s.box)
	t.Version = d.Version
	return t, nil
}

// SaveStep stores a step: the pages of the changed task runs, each on the version it was
// read at, then the run on its version, changed or not. Pages go first so that a reader
// never sees a run ahead of its task runs (a run completed, a task still running).
//
// The run's version orders the steps of a run. A replica stepping from an outdated view
// may still write a page no one else changed, but only facts go there: task runs move
// forward only, and a decision about a task is taken only once all it depends on has
// ended, which no newer view would undo. What an outdated view misses is a decision, and
// the replica learns of it when the run's version refuses it: it reloads, and loading
// derives the decisions a run still owes. Versions advance in memory as writes succeed;
// domain.ErrConflict means another writer moved first and the caller must reload. The
// order is turned around once the run has stopped: its tasks' ends alone would read as a
// failure, while the run's end alone says how to end them (see Recover).
func (s *Store) SaveStep(ctx context.Context, r *domain.Run, all []*domain.TaskRun, changed []int) error {
	if r.Stopped() {
		if err := s.saveRun(ctx, r); err != nil {
			return err
		}
		return s.savePages(ctx, r, all, changed)
	}
	if err := s.savePages(ctx, r, all, changed); err != nil {
		return err
	}
	return s.saveRun(ctx, r)
}

// SaveTasks stores a step that leaves the run as stored (see SaveStep): it writes the run
// too, as SaveStep does, which is what orders the steps of several replicas.
func (s *Store) SaveTasks(ctx context.Context, r *domain.Run, all []*domain.TaskRun, changed []int) error {
	return s.SaveStep(ctx, r, all, changed)
}

// savePages writes the pages of the changed task runs, each on its version.
func (s *Store) savePages(ctx context.Context, r *domain.Run, all []*domain.TaskRun, changed []int) error {
	var pages []int
	for _, i := range changed {
		pages = append(pages, i/PageSize)
	}
	slices.Sort(pages)
	pages = slices.Compact(pages)
	if len(pages) > 0 {
		models := make([]mongo.WriteModel, len(pages))
		for k, p := range pages {
			v := all[p*PageSize].Version
			models[k] = mongo.NewReplaceOneModel().SetFilter(bson.M{"_id": pageID(r.ID, p), "version": v}).
				SetReplacement(pageOf(r.ID, all, p, v+1, s.box))
		}
		matched, err := bulkWrite(ctx, s.livePages(r.ID), models)
		if err != nil {
			return fmt.Errorf("save task runs of %s: %w", r.ID, err)
		}
		if matched != len(pages) {
			return fmt.Errorf("save task runs of %s: %w", r.ID, domain.ErrConflict)
		}
		for _, p := range pages {
			for _, t := range all[p*PageSize : min(len(all), (p+1)*PageSize)] {
				t.Version++
			}
		}
	}
	return nil
}

// saveRun writes the run on its version.
func (s *Store) saveRun(ctx context.Context, r *domain.Run) error {
	d := toRunDoc(r, s.box)
	d.Version = r.Version + 1
	ok, err := s.replaceAt(ctx, s.live, r.ID, r.Version, d)
	if err != nil {
		return fmt.Errorf("save run %s: %w", r.ID, err)
	}
	if !ok {
		return fmt.Errorf("save run %s: %w", r.ID, domain.ErrConflict)
	}
	r.Version++
	return nil
}

// Archive moves a run that ended, with its pages, from the live collections to the
// archive. Every part is written before the live copies go, and each write may be
// repeated, so a crash midway leaves a run that Archive completes again.
func (s *Store) Archive(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun) error {
	d := toRunDoc(r, s.box)
	d.Owner, d.Queued = "", false
	if len(d.Owed) > 0 {
		d.OwedAt = r.EndTime
	}
	// Inserted as runs that end within their first step are, together with those being
	// archived or created meanwhile. Pages there already, or the run, are an archive
	// repeated after a crash.
	err := s.createArchived.Do(ctx, creation{run: d, pages: s.archivedPages, docs: pageDocs(r.ID, tasks, s.box)})
	if err != nil && !errors.Is(err, domain.ErrConflict) {
		return fmt.Errorf("archive run %s: %w", r.ID, err)
	}
	for p := range pageCount(len(tasks)) {
		if _, err := s.livePages(r.ID).DeleteOne(ctx, bson.M{"_id": pageID(r.ID, p)}); err != nil {
			return fmt.Errorf("remove live task runs of %s: %w", r.ID, err)
		}
	}
	if _, err := s.live.DeleteOne(ctx, bson.M{"_id": r.ID}); err != nil {
		return fmt.Errorf("remove live run %s: %w", r.ID, err)
	}
	return nil
}

// FinalizeArchived moves an archived run from completed to finalized; false when it is
// not completed.
func (s *Store) FinalizeArchived(ctx context.Context, id string) (bool, error) {
	res, err := s.runs.UpdateOne(ctx, bson.M{"_id": id, "phase": string(domain.Completed)},
		bson.M{"$set": bson.M{"phase": string(domain.Finalized)}, "$inc": bson.M{"version": 1}})
	if err != nil {
		return false, fmt.Errorf("finalize run %s: %w", id, err)
	}
	return res.MatchedCount == 1, nil
}

// SaveHeartbeat stores a heartbeat of a task run's attempt, unchecked.
//
// Beats live apart from the task run, written by _id alone: a write that names other
// fields reads the whole collection on the embedded FerretDB, and beats are the engine's
// most frequent write. A beat counts only for the attempt and runner it names, so one that
// lands after the attempt moved on is ignored.
func (s *Store) SaveHeartbeat(ctx context.Context, taskRunID string, b domain.Heartbeat) error {
	_, err := s.beats.UpdateOne(ctx, bson.M{"_id": taskRunID},
		bson.M{"$set": bson.M{"attempt": b.Attempt, "runner": b.Runner, "at": b.At}}, options.UpdateOne().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("heartbeat %s: %w", taskRunID, err)
	}
	return nil
}

// beatDoc is the last heartbeat stored for a task run.
type beatDoc struct {
	Attempt int       `bson:"attempt"`
	Runner  string    `bson:"runner"`
	At      time.Time `bson:"at"`
}

// LastHeartbeat reads the last heartbeat of a task run; ok is false when there is none.
func (s *Store) LastHeartbeat(ctx context.Context, taskRunID string) (domain.Heartbeat, bool, error) {
	b, err := mongox.FindOne[beatDoc](ctx, s.beats, bson.M{"_id": taskRunID})
	if errors.Is(err, mongox.ErrNotFound) {
		return domain.Heartbeat{}, false, nil
	}
	if err != nil {
		return domain.Heartbeat{}, false, fmt.Errorf("heartbeat of %s: %w", taskRunID, err)
	}
	return domain.Heartbeat(b), true, nil
}

// PurgeHeartbeats deletes heartbeats older than before.
func (s *Store) PurgeHeartbeats(ctx context.Context, before time.Time) error {
	if _, err := s.beats.DeleteMany(ctx, bson.M{"at": bson.M{"$lt": before}}); err != nil {
		return fmt.Errorf("purge heartbeats: %w", err)
	}
	return nil
}

// filterDoc is the query of the runs f selects.
func filterDoc(f domain.RunFilter) bson.M {
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
	if len(f.Exclude) > 0 {
		ids, _ := m["_id"].(bson.M)
		if ids == nil {
			ids = bson.M{}
		}
		ids["$nin"] = f.Exclude
		m["_id"] = ids
	}
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

// FindRuns returns one page of runs, in flight and ended together, ordered by creation
// date, and how many match in all.
//
// A run moves to the archive while this reads (inserted there, then removed from the live
// collection). So the live collection is read first, only the ids and creation dates of its
// matches, and the archive's queries leave out every run it held: a run is counted and
// listed once, from whichever collection held it then. A run of the page that left the
// live collection since is read from the archive.
func (s *Store) FindRuns(ctx context.Context, f domain.RunFilter, p page.Request) ([]*domain.Run, int64, error) {
	sort := mongox.Sort{Field: "creationDate", Tiebreak: "_id", Desc: p.Desc}
	inLive, err := s.liveKeys(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	archived := f
	archived.Exclude = append(slices.Clone(f.Exclude), keyIDs(inLive)...)
	// The archive gives its first offset+size matches; the page is cut from their merge
	// with the live keys.
	upto := p.Offset() + int64(p.Size)
	ended, endedTotal, err := mongox.FindPage[runDoc](ctx, s.runs, filterDoc(archived), sort, 0, upto)
	if err != nil {
		return nil, 0, err
	}
	type entry struct {
		key runKey
		doc *runDoc
	}
	all := make([]entry, 0, len(inLive)+len(ended))
	for _, k := range inLive {
		all = append(all, entry{key: k})
	}
	for i := range ended {
		all = append(all, entry{key: runKey{ID: ended[i].ID, CreationDate: ended[i].CreationDate}, doc: &ended[i]})
	}
	slices.SortFunc(all, func(a, b entry) int {
		c := cmp.Or(a.key.CreationDate.Compare(b.key.CreationDate), cmp.Compare(a.key.ID, b.key.ID))
		if p.Desc {
			return -c
		}
		return c
	})
	from := min(int(p.Offset()), len(all))
	window := all[from:min(from+p.Size, len(all))]
	var want []string
	for _, e := range window {
		if e.doc == nil {
			want = append(want, e.key.ID)
		}
	}
	live, err := s.liveDocs(ctx, want)
	if err != nil {
		return nil, 0, err
	}
	out := make([]*domain.Run, 0, len(window))
	for _, e := range window {
		d := e.doc
		if d == nil {
			d = live[e.key.ID]
		}
		if d == nil {
			continue
		}
		out = append(out, d.run(s.box))
	}
	return out, int64(len(inLive)) + endedTotal, nil
}

// runKey is what orders a run in a search, and its status for counts.
type runKey struct {
	ID           string    `bson:"_id"`
	CreationDate time.Time `bson:"creationDate"`
	Status       string    `bson:"status"`
}

// liveKeys reads the keys of the runs f selects in the live collection: runs in flight and
// those being put away, few next to the archive.
func (s *Store) liveKeys(ctx context.Context, f domain.RunFilter) ([]runKey, error) {
	cur, err := s.live.Find(ctx, filterDoc(f), options.Find().SetProjection(bson.M{"_id": 1, "creationDate": 1, "status": 1}))
	if err != nil {
		return nil, fmt.Errorf("find runs in flight: %w", err)
	}
	var keys []runKey
	if err := cur.All(ctx, &keys); err != nil {
		return nil, fmt.Errorf("read runs in flight: %w", err)
	}
	return keys, nil
}

func keyIDs(keys []runKey) []string {
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = k.ID
	}
	return ids
}

// liveDocs reads the runs named, from the live collection, else (put away since) the
// archive.
func (s *Store) liveDocs(ctx context.Context, ids []string) (map[string]*runDoc, error) {
	out := make(map[string]*runDoc, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	cur, err := s.live.Find(ctx, bson.M{"_id": bson.M{"$in": ids}})
	if err != nil {
		return nil, fmt.Errorf("find runs: %w", err)
	}
	var docs []runDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	for i := range docs {
		out[docs[i].ID] = &docs[i]
	}
	for _, id := range ids {
		if out[id] != nil {
			continue
		}
		d, _, err := s.findRunDoc(ctx, id)
		if apperr.HasReason(err, apperr.WorkflowRunNotFound) {
			continue // removed with its team meanwhile
		}
		if err != nil {
			return nil, err
		}
		out[id] = &d
	}
	return out, nil
}

// findIDs lists the ids of the documents of coll that match filter.
func findIDs(ctx context.Context, coll *mongo.Collection, filter bson.M) ([]string, error) {
	cur, err := coll.Find(ctx, filter, options.Find().SetProjection(bson.M{"_id": 1}))
	if err != nil {
		return nil, err
	}
	var rows []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		return nil, err
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids, nil
}

// CountRuns counts a team's runs by status. As in FindRuns, the live collection is read
// first and the archive's count leaves out the runs it held, so a run being put away is
// counted once.
func (s *Store) CountRuns(ctx context.Context, f domain.RunFilter) (map[string]int64, error) {
	out := map[string]int64{}
	inLive, err := s.liveKeys(ctx, f)
	if err != nil {
		return nil, err
	}
	for _, k := range inLive {
		out[k.Status]++
	}
	archived := f
	archived.Exclude = append(slices.Clone(f.Exclude), keyIDs(inLive)...)
	cur, err := s.runs.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: filterDoc(archived)}},
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
	for _, r := range rows {
		out[r.ID] += r.N
	}
	return out, nil
}
