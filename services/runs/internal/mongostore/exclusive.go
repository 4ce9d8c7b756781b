package mongostore

import (
	"context"
	"errors"
	"hash/fnv"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// The writes of runs in flight are conditional: on a version, or on the replica holding a
// run. MongoDB answers such a write through the _id index whatever else the filter holds;
// the embedded FerretDB reads a document by its index only when the filter is the _id
// alone, and otherwise reads the whole collection — every write of a step would read every
// run in flight, thousands of them when runs wait on people. A store that is its
// database's only writer (Exclusive: the standalone process) checks the condition itself
// instead: it reads the document by _id and writes it by _id, holding a lock of its own
// for that id meanwhile. Every conditional write of the live collections goes through
// replaceIf and updateIf, so the locks see them all.

// Option tunes a Store.
type Option func(*Store)

// Exclusive tells the store that it is the only writer of its database: the standalone
// process, with one replica of the runs service on an embedded database.
func Exclusive() Option { return func(s *Store) { s.exclusive = true } }

// stripes is how many locks the ids of an exclusive store's conditional writes share.
const stripes = 256

// idLocks are the locks of an exclusive store's conditional writes, by id.
type idLocks [stripes]sync.Mutex

func (l *idLocks) of(id string) *sync.Mutex {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return &l[h.Sum32()%stripes]
}

// replaceIf replaces document id of coll by doc when the document holds cond's values
// (besides its _id), and reports whether it did.
func (s *Store) replaceIf(ctx context.Context, coll *mongo.Collection, id string, cond bson.M, doc any) (bool, error) {
	if !s.exclusive {
		res, err := coll.ReplaceOne(ctx, withID(id, cond), doc)
		if err != nil {
			return false, err
		}
		return res.MatchedCount == 1, nil
	}
	mu := s.writeLocks.of(id)
	mu.Lock()
	defer mu.Unlock()
	if ok, err := s.holds(ctx, coll, id, cond); !ok || err != nil {
		return false, err
	}
	res, err := coll.ReplaceOne(ctx, bson.M{"_id": id}, doc)
	if err != nil {
		return false, err
	}
	return res.MatchedCount == 1, nil
}

// replaceAt replaces document id of coll, stored at version v, by doc, which is at v+1,
// and reports whether it did. An exclusive store knows the version it last wrote each
// document at (knownVersions), so a step's writes, two per step, need no read before
// them: half the round trips of a step on the embedded database.
func (s *Store) replaceAt(ctx context.Context, coll *mongo.Collection, id string, v int64, doc any) (bool, error) {
	if !s.exclusive {
		return s.replaceIf(ctx, coll, id, bson.M{"version": v}, doc)
	}
	mu := s.writeLocks.of(id)
	mu.Lock()
	defer mu.Unlock()
	known, ok := s.versions.get(coll, id)
	switch {
	case ok && known != v:
		return false, nil
	case !ok:
		if held, err := s.holds(ctx, coll, id, bson.M{"version": v}); !held || err != nil {
			return false, err
		}
	}
	res, err := coll.ReplaceOne(ctx, bson.M{"_id": id}, doc)
	if err != nil || res.MatchedCount != 1 {
		// Written or not, gone or not: the next write reads what is stored.
		s.versions.forget(coll, id)
		return false, err
	}
	s.versions.set(coll, id, v+1)
	return true, nil
}

// knownVersions are the versions an exclusive store last wrote documents of the live
// collections at, by collection and id. Only replaceAt and CreateRun set them; any write
// that moves a version forgets its entry (updateIf); a document deleted meanwhile makes
// the write match nothing, which replaceAt answers as the conflict it is. Bounded: past
// maxKnown entries it starts again empty, which costs one read per document.
type knownVersions struct {
	mu sync.Mutex
	m  map[string]int64
}

// maxKnown bounds knownVersions: a few MiB.
const maxKnown = 1 << 16

func versionKey(coll *mongo.Collection, id string) string { return coll.Name() + "/" + id }

func (k *knownVersions) get(coll *mongo.Collection, id string) (int64, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.m[versionKey(coll, id)]
	return v, ok
}

func (k *knownVersions) set(coll *mongo.Collection, id string, v int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil || len(k.m) >= maxKnown {
		k.m = map[string]int64{}
	}
	k.m[versionKey(coll, id)] = v
}

func (k *knownVersions) forget(coll *mongo.Collection, id string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.m, versionKey(coll, id))
}

// updateIf applies update to document id of coll when it holds cond's values, and reports
// whether it did.
func (s *Store) updateIf(ctx context.Context, coll *mongo.Collection, id string, cond bson.M, update bson.M) (bool, error) {
	if !s.exclusive {
		res, err := coll.UpdateOne(ctx, withID(id, cond), update)
		if err != nil {
			return false, err
		}
		return res.MatchedCount == 1, nil
	}
	mu := s.writeLocks.of(id)
	mu.Lock()
	defer mu.Unlock()
	// The update may move the version: the next replaceAt reads it.
	s.versions.forget(coll, id)
	if ok, err := s.holds(ctx, coll, id, cond); !ok || err != nil {
		return false, err
	}
	res, err := coll.UpdateOne(ctx, bson.M{"_id": id}, update)
	if err != nil {
		return false, err
	}
	return res.MatchedCount == 1, nil
}

// holds reports whether document id of coll exists and has cond's values.
func (s *Store) holds(ctx context.Context, coll *mongo.Collection, id string, cond bson.M) (bool, error) {
	proj := bson.M{}
	for k := range cond {
		proj[k] = 1
	}
	cur, err := mongox.FindOne[bson.M](ctx, coll, bson.M{"_id": id}, options.FindOne().SetProjection(proj))
	if errors.Is(err, mongox.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for k, want := range cond {
		if !sameValue(cur[k], want) {
			return false, nil
		}
	}
	return true, nil
}

// sameValue compares a stored value with the one a condition wants: numbers by value
// (the driver reads them back as int32 or int64), anything else as it is.
func sameValue(got, want any) bool {
	if g, ok := asInt(got); ok {
		w, ok := asInt(want)
		return ok && g == w
	}
	return got == want
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

func withID(id string, cond bson.M) bson.M {
	f := bson.M{"_id": id}
	for k, v := range cond {
		f[k] = v
	}
	return f
}

// replacePages writes pages of run r, each on its version, one at a time: an exclusive
// store checks each version itself.
func (s *Store) replacePages(ctx context.Context, r *domain.Run, all []*domain.TaskRun, pages []int) (int, error) {
	matched := 0
	for _, p := range pages {
		v := all[p*PageSize].Version
		ok, err := s.replaceAt(ctx, s.livePages(r.ID), pageID(r.ID, p), v, pageOf(r.ID, all, p, v+1, s.box))
		if err != nil {
			return matched, err
		}
		if ok {
			matched++
		}
	}
	return matched, nil
}
