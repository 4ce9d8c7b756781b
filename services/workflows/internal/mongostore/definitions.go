package mongostore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/outbox"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// How workflows and templates are stored, and why.
//
// On FerretDB v1 with SQLite (standalone mode and tests) no query uses an index: `_id` is
// indexed for uniqueness only, and a find by `_id` scans the table in insertion order until
// the first match (measured at 10,000 small documents: 0.4 ms for the first, 31 ms for the
// last; at 40,000: 165 ms; a miss scans everything). Updates and deletes, even by `_id`,
// scan the whole table; any other filter is evaluated in Go over every document. Inserts
// are cheap. So:
//
//   - Documents that grow in number are written once and never changed, and reads of them
//     are served from memory where they can be: they are immutable, so caches keyed by
//     `_id` need no invalidation, and a save caches what it wrote.
//   - Documents that are updated live in collections as small as the number of teams.
//
// The collections:
//
//   - workflowVersions_NN (NN = 00…63, by a hash of `<team>/<name>`, to keep FerretDB's
//     scans of uncached reads short; kept so, where FerretDB is no longer the default,
//     because every existing database holds its versions there, and on MongoDB a lookup by
//     `_id` costs the same in one collection or in 64) and templateVersions: one immutable document per revision of a
//     version, `_id` `<team>/<name>/<version>` (templates: `<name>/<version>`). Replacing a
//     version in place stores a new revision, `<team>/<name>/<version>.<rev>`; the catalog
//     says which revision holds each version.
//   - catalogs: immutable snapshots of a namespace's catalog (every workflow's head: latest
//     version and its revision, status, labels, creation date), compressed in one field,
//     `_id` `<team>/<teamId>/<seq>/<nonce>`. Only the one its head names is current; the
//     writer that supersedes it deletes it.
//   - catalogHeads: per team incarnation (and one for templates), `_id` `<team>/<teamId>`,
//     naming the current snapshot and its seq. A change inserts its snapshot, then moves
//     the head with a conditional update on seq: the compare-and-swap that keeps
//     concurrent saves from losing one another. The events the change owes are pushed in
//     the same update (one write: the change and its events), and the outbox relay sweeps
//     this small collection.
//
// A read costs one lookup of the head in a small collection; the snapshot it names is
// cached in memory (a query filters and pages it there), and so are revisions. On MongoDB
// every `_id` lookup is indexed and the same design simply costs less.
const (
	CatalogsCollection     = "catalogs"
	CatalogHeadsCollection = "catalogHeads"
	// WorkflowVersionsCollection prefixes the revision buckets of team workflows.
	WorkflowVersionsCollection = "workflowVersions"
	TemplateVersionsCollection = "templateVersions"
	// versionBuckets is how many collections team workflows' revisions are spread over.
	versionBuckets = 64
)

// Cache sizes: catalogs of this many namespaces, this many revision summaries (a workflow
// without its tasks, a few KB each), and stored revisions as compressed (a 500-task
// workflow is about 15 KB) up to a byte budget.
const (
	catalogCacheSize  = 1024
	summaryCacheSize  = 8192
	revisionCacheSize = 1 << 16
	revisionCacheMem  = 64 << 20
	// maxAttempts bounds the retries of a catalog change that lost the race to another.
	maxAttempts = 64
	// maxRevisionProbes bounds the revision numbers tried for one version.
	maxRevisionProbes = 64
	// garbageQueue bounds the revisions waiting to be collected.
	garbageQueue = 4096
	// templatesKey is the templates' namespace key; team names are slugs, never "~".
	templatesKey = "~templates"
)

type catalogDoc struct {
	ID  string `bson:"_id"`
	NS  string `bson:"ns"`
	Seq int64  `bson:"seq"`
	// Entries are the heads, encoded by encodeEntries.
	Entries []byte `bson:"entries"`
}

type headDoc struct {
	ID       string `bson:"_id"`
	Seq      int64  `bson:"seq"`
	Snapshot string `bson:"snapshot"`
}

// current is a cached catalog and the snapshot it was read from.
type current struct {
	catalog  *domain.Catalog
	snapshot string
}

type revisionDoc struct {
	ID      string    `bson:"_id"`
	Team    string    `bson:"team,omitempty"`
	TeamID  string    `bson:"teamId,omitempty"`
	Name    string    `bson:"name"`
	Version int       `bson:"version"`
	Rev     int       `bson:"rev"`
	Author  string    `bson:"author,omitempty"`
	Reason  string    `bson:"reason,omitempty"`
	Date    time.Time `bson:"date"`
	// Def is the compressed JSON of the definition without tasks; Tasks of its tasks, apart
	// so that summaries (queries, changelogs) need not decode them.
	Def   []byte `bson:"def"`
	Tasks []byte `bson:"tasks,omitempty"`
}

// Definitions is the Mongo DefinitionStore of workflows and templates.
type Definitions struct {
	catalogs  *mongo.Collection
	heads     *mongo.Collection
	workflows []*mongo.Collection
	templates *mongo.Collection
	cache     *lru[current]
	summaries *lru[domain.Revision]
	docs      *lru[revisionDoc]
	garbage   chan garbage
	box       Sealer
}

// NewDefinitions returns the store over db; box seals password parameters at rest.
func NewDefinitions(db *mongo.Database, box Sealer) *Definitions {
	s := &Definitions{
		box:       box,
		catalogs:  db.Collection(CatalogsCollection),
		heads:     db.Collection(CatalogHeadsCollection),
		templates: db.Collection(TemplateVersionsCollection),
		cache:     newLRU[current](catalogCacheSize),
		summaries: newLRU[domain.Revision](summaryCacheSize),
		docs: newSizedLRU(revisionCacheSize, revisionCacheMem, func(d revisionDoc) int {
			return len(d.Def) + len(d.Tasks) + 256
		}),
		garbage: make(chan garbage, garbageQueue),
	}
	for i := range versionBuckets {
		s.workflows = append(s.workflows, db.Collection(fmt.Sprintf("%s_%02d", WorkflowVersionsCollection, i)))
	}
	return s
}

// Heads is the catalog heads collection, whose outbox the relay drains.
func (s *Definitions) Heads() *mongo.Collection { return s.heads }

func nsKey(ns domain.Namespace) string {
	if ns.IsTemplates() {
		return templatesKey
	}
	return ns.Team + "/" + ns.TeamID
}

// Catalog returns the current catalog of ns: a read of its head, and of the snapshot it
// names only when the cached one is not that snapshot.
func (s *Definitions) Catalog(ctx context.Context, ns domain.Namespace) (*domain.Catalog, error) {
	cur, err := s.current(ctx, nsKey(ns))
	return cur.catalog, err
}

// remember caches c as key's catalog unless a later one is cached already: a read that
// began before a change, or a change that lost the race to cache, does not put back an
// older catalog.
func (s *Definitions) remember(key string, c current) {
	s.cache.putUnless(key, c, func(held current) bool { return held.catalog.Seq > c.catalog.Seq })
}

func (s *Definitions) current(ctx context.Context, key string) (current, error) {
	for range 3 {
		head, err := mongox.FindOne[headDoc](ctx, s.heads, bson.M{"_id": key},
			options.FindOne().SetProjection(bson.M{outbox.Field: 0}))
		if errors.Is(err, mongox.ErrNotFound) {
			return current{catalog: domain.NewCatalog(0, nil)}, nil
		}
		if err != nil {
			return current{}, fmt.Errorf("read catalog head %s: %w", key, err)
		}
		if c, ok := s.cache.get(key); ok && c.snapshot == head.Snapshot {
			return c, nil
		}
		c, found, err := s.load(ctx, head)
		if err != nil {
			return current{}, err
		}
		if !found {
			continue // superseded and deleted since the head was read: read it again
		}
		s.remember(key, c)
		return c, nil
	}
	return current{}, apperr.New(apperr.ConcurrentModification, "The catalog changed too often while being read; try again.")
}

func (s *Definitions) load(ctx context.Context, head headDoc) (current, bool, error) {
	doc, err := mongox.FindOne[catalogDoc](ctx, s.catalogs, bson.M{"_id": head.Snapshot})
	if errors.Is(err, mongox.ErrNotFound) {
		return current{}, false, nil
	}
	if err != nil {
		return current{}, false, fmt.Errorf("read catalog %s: %w", head.Snapshot, err)
	}
	entries, err := decodeEntries(doc.Entries)
	if err != nil {
		return current{}, false, fmt.Errorf("decode catalog %s: %w", doc.ID, err)
	}
	return current{catalog: domain.NewCatalog(head.Seq, entries), snapshot: head.Snapshot}, true, nil
}

// UpdateCatalog stores the catalog fn makes from the current one as its successor.
func (s *Definitions) UpdateCatalog(ctx context.Context, ns domain.Namespace, fn func(next *domain.Catalog) ([]outbox.Entry, error)) (*domain.Catalog, error) {
	key := nsKey(ns)
	for range maxAttempts {
		cur, err := s.current(ctx, key)
		if err != nil {
			return nil, err
		}
		next := cur.catalog.Next()
		owed, err := fn(next)
		if err != nil {
			return nil, err
		}
		doc := snapshot(key, next)
		if _, err := s.catalogs.InsertOne(ctx, doc); err != nil {
			return nil, fmt.Errorf("store catalog %s: %w", doc.ID, err)
		}
		moved, err := s.moveHead(ctx, key, cur.catalog.Seq, doc, owed)
		if err != nil || !moved {
			// Ours lost (or failed): the snapshot is nobody's. A leftover after a crash is
			// harmless: no head names it.
			_, _ = s.catalogs.DeleteOne(context.WithoutCancel(ctx), bson.M{"_id": doc.ID})
			if err != nil {
				return nil, err
			}
			continue
		}
		s.remember(key, current{catalog: next, snapshot: doc.ID})
		if cur.snapshot != "" {
			_, _ = s.catalogs.DeleteOne(context.WithoutCancel(ctx), bson.M{"_id": cur.snapshot})
		}
		return next, nil
	}
	return nil, apperr.New(apperr.ConcurrentModification, "Too many changes at once; try again.")
}

// moveHead points the head of key at doc if it still is at seq, pushing the owed events in
// the same write. false means another writer moved it first.
func (s *Definitions) moveHead(ctx context.Context, key string, seq int64, doc catalogDoc, owed []outbox.Entry) (bool, error) {
	update := bson.M{"$set": bson.M{"seq": doc.Seq, "snapshot": doc.ID}}
	if len(owed) > 0 {
		update["$push"] = bson.M{outbox.Field: bson.M{"$each": owed}}
	}
	if seq == 0 {
		// The first change creates the head; a racing first change finds it taken.
		res, err := s.heads.UpdateOne(ctx, bson.M{"_id": key, "seq": 0}, update, options.UpdateOne().SetUpsert(true))
		if mongox.IsDuplicateKey(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("create catalog head %s: %w", key, err)
		}
		return res.UpsertedCount == 1 || res.MatchedCount == 1, nil
	}
	res, err := s.heads.UpdateOne(ctx, bson.M{"_id": key, "seq": seq}, update)
	if err != nil {
		return false, fmt.Errorf("move catalog head %s: %w", key, err)
	}
	return res.MatchedCount == 1, nil
}

func snapshot(key string, c *domain.Catalog) catalogDoc {
	id := key + "/" + strconv.FormatInt(c.Seq, 10) + "/" + bson.NewObjectID().Hex()
	return catalogDoc{ID: id, NS: key, Seq: c.Seq, Entries: encodeEntries(c.Entries())}
}

func (s *Definitions) revisions(ns domain.Namespace, name string) *mongo.Collection {
	if ns.IsTemplates() {
		return s.templates
	}
	h := fnv.New32a()
	h.Write([]byte(ns.Team + "/" + name))
	return s.workflows[h.Sum32()%versionBuckets]
}

func revisionID(ns domain.Namespace, name string, version, rev int) string {
	id := name + "/" + strconv.Itoa(version)
	if !ns.IsTemplates() {
		id = ns.Team + "/" + id
	}
	if rev > 1 {
		id += "." + strconv.Itoa(rev)
	}
	return id
}

// InsertRevision stores r under the first free revision number from r.Rev. A taken number
// belongs to a concurrent save of the same version, a save that died before its catalog
// change, or a deleted incarnation of the name; none of them is the catalog's, so the next
// number serves as well.
func (s *Definitions) InsertRevision(ctx context.Context, ns domain.Namespace, r domain.Revision) (int, error) {
	def := r.Workflow
	tasks := def.Tasks
	def.Tasks = nil
	params, err := sealParams(s.box, def.Params)
	if err != nil {
		return 0, fmt.Errorf("encode %s version %d: %w", r.Name, r.Version, err)
	}
	def.Params = params
	if tasks, err = sealTaskSecrets(s.box, tasks); err != nil {
		return 0, fmt.Errorf("encode tasks of %s version %d: %w", r.Name, r.Version, err)
	}
	packedDef, err := pack(def)
	if err != nil {
		return 0, fmt.Errorf("encode %s version %d: %w", r.Name, r.Version, err)
	}
	var packedTasks []byte
	if tasks != nil {
		if packedTasks, err = pack(tasks); err != nil {
			return 0, fmt.Errorf("encode tasks of %s version %d: %w", r.Name, r.Version, err)
		}
	}
	doc := revisionDoc{
		Team: ns.Team, TeamID: ns.TeamID, Name: r.Name, Version: r.Version,
		Author: r.Changelog.Author, Reason: r.Changelog.Reason, Def: packedDef, Tasks: packedTasks,
	}
	if r.Changelog.Date != nil {
		doc.Date = r.Changelog.Date.Time
	}
	coll := s.revisions(ns, r.Name)
	for rev := max(r.Rev, 1); rev < max(r.Rev, 1)+maxRevisionProbes; rev++ {
		doc.ID, doc.Rev = revisionID(ns, r.Name, r.Version, rev), rev
		_, err := coll.InsertOne(ctx, doc)
		if mongox.IsDuplicateKey(err) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("store %s: %w", doc.ID, err)
		}
		s.docs.put(nsKey(ns)+":"+doc.ID, doc)
		return rev, nil
	}
	return 0, apperr.New(apperr.ConcurrentModification, "Too many saves of '%s' version %d at once; try again.", r.Name, r.Version)
}

// FindRevision reads one revision. Summaries (without tasks) are cached: a revision never
// changes under its `_id`.
func (s *Definitions) FindRevision(ctx context.Context, ns domain.Namespace, name string, version, rev int, load domain.Load) (domain.Revision, error) {
	id := revisionID(ns, name, version, rev)
	cacheKey := nsKey(ns) + ":" + id
	if load == domain.LoadSummary {
		if r, ok := s.summaries.get(cacheKey); ok {
			return r, nil
		}
	}
	doc, err := s.findRevision(ctx, ns, name, version, id, cacheKey)
	if err != nil {
		return domain.Revision{}, err
	}
	r := domain.Revision{
		Name: doc.Name, Version: doc.Version, Rev: doc.Rev,
		Changelog: domain.Changelog{Author: doc.Author, Reason: doc.Reason, Date: domain.NewTime(doc.Date)},
	}
	if err := unpack(doc.Def, &r.Workflow); err != nil {
		return domain.Revision{}, fmt.Errorf("decode %s: %w", id, err)
	}
	openParams(s.box, r.Workflow.Params)
	switch {
	case load == domain.LoadSummary:
		s.summaries.put(cacheKey, r)
	case len(doc.Tasks) == 0:
	case load == domain.LoadRawTasks:
		if r.Workflow.RawTasks, err = decoder.DecodeAll(doc.Tasks, nil); err != nil {
			return domain.Revision{}, fmt.Errorf("decompress tasks of %s: %w", id, err)
		}
	default:
		if err := unpack(doc.Tasks, &r.Workflow.Tasks); err != nil {
			return domain.Revision{}, fmt.Errorf("decode tasks of %s: %w", id, err)
		}
		r.Workflow.Tasks = openTaskSecrets(s.box, r.Workflow.Tasks)
	}
	return r, nil
}

// findRevision returns the stored revision id, from memory when this process wrote or read
// it before.
func (s *Definitions) findRevision(ctx context.Context, ns domain.Namespace, name string, version int, id, cacheKey string) (revisionDoc, error) {
	if doc, ok := s.docs.get(cacheKey); ok {
		return doc, nil
	}
	doc, err := mongox.FindOne[revisionDoc](ctx, s.revisions(ns, name), bson.M{"_id": id})
	if errors.Is(err, mongox.ErrNotFound) {
		return revisionDoc{}, apperr.New(apperr.WorkflowRevisionNotFound, "Version %d of '%s' was not found.", version, name)
	}
	if err != nil {
		return revisionDoc{}, fmt.Errorf("read %s: %w", id, err)
	}
	s.docs.put(cacheKey, doc)
	return doc, nil
}

// garbage is a revision to collect.
type garbage struct {
	ns      domain.Namespace
	name    string
	version int
	rev     int
}

// CollectRevision queues a revision for RunCollector. A full queue drops it: garbage left
// behind costs room, not correctness.
func (s *Definitions) CollectRevision(ns domain.Namespace, name string, version, rev int) {
	select {
	case s.garbage <- garbage{ns: ns, name: name, version: version, rev: rev}:
	default:
	}
}

// RunCollector deletes queued revisions until ctx ends. On FerretDB each delete scans its
// bucket, which is why saves and deletes do not wait for it.
func (s *Definitions) RunCollector(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case g := <-s.garbage:
			// Deleted first, then forgotten: a read between the two would cache it again.
			id := revisionID(g.ns, g.name, g.version, g.rev)
			_, _ = s.revisions(g.ns, g.name).DeleteOne(ctx, bson.M{"_id": id})
			s.summaries.remove(nsKey(g.ns) + ":" + id)
			s.docs.remove(nsKey(g.ns) + ":" + id)
		}
	}
}

// DeleteNamespace removes everything of a team incarnation. Unpublished events of its
// catalogs go with them: the team's deletion is the event every service acts on.
func (s *Definitions) DeleteNamespace(ctx context.Context, ns domain.Namespace) error {
	if ns.IsTemplates() {
		return errors.New("the templates cannot be deleted as a whole")
	}
	key := nsKey(ns)
	for _, coll := range s.workflows {
		if _, err := coll.DeleteMany(ctx, bson.M{"team": ns.Team, "teamId": ns.TeamID}); err != nil {
			return fmt.Errorf("delete versions of %s: %w", key, err)
		}
	}
	if _, err := s.catalogs.DeleteMany(ctx, bson.M{"ns": key}); err != nil {
		return fmt.Errorf("delete catalogs of %s: %w", key, err)
	}
	if _, err := s.heads.DeleteOne(ctx, bson.M{"_id": key}); err != nil {
		return fmt.Errorf("delete catalog head of %s: %w", key, err)
	}
	s.cache.remove(key)
	s.summaries.removePrefix(key + ":")
	s.docs.removePrefix(key + ":")
	return nil
}
