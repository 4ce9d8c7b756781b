package mongostore

import (
	"context"
	"hash/fnv"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// The writes of runs in flight are conditional: on a version, or on the replica holding a
// run. MongoDB answers such a write through the _id index whatever else the filter holds.
// (The embedded FerretDB, which keeps the runs of a standalone data directory made by an
// earlier version, reads the whole collection for them: correct, one write at a time,
// and slower than the SQLite file standalone mode gives runs now.)

// replaceAt replaces document id of coll, stored at version v, by doc, and reports
// whether it did.
func (s *Store) replaceAt(ctx context.Context, coll *mongo.Collection, id string, v int64, doc any) (bool, error) {
	res, err := coll.ReplaceOne(ctx, bson.M{"_id": id, "version": v}, doc)
	if err != nil {
		return false, err
	}
	return res.MatchedCount == 1, nil
}

// updateIf applies update to document id of coll when it holds cond's values, and reports
// whether it did.
func (s *Store) updateIf(ctx context.Context, coll *mongo.Collection, id string, cond bson.M, update bson.M) (bool, error) {
	f := bson.M{"_id": id}
	for k, v := range cond {
		f[k] = v
	}
	res, err := coll.UpdateOne(ctx, f, update)
	if err != nil {
		return false, err
	}
	return res.MatchedCount == 1, nil
}

// stripes is how many locks the ids of idLocks share.
const stripes = 256

// idLocks are locks by id, striped.
type idLocks [stripes]sync.Mutex

func (l *idLocks) of(id string) *sync.Mutex {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return &l[h.Sum32()%stripes]
}
