package mongox

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// VersionField is the document field UpdateVersioned compares and increments. Documents
// are created with whatever version their creator writes, conventionally 1.
const VersionField = "version"

// errBadUpdate marks UpdateVersioned arguments it refuses before touching the database.
var errBadUpdate = errors.New("invalid versioned update")

// UpdateVersioned applies update to the document matching filter only if it is still at
// version, and increments its version in the same write: optimistic concurrency for a
// load → decide → write cycle without transactions (FerretDB has none).
//
// The filter gets version: version added and the update gets $inc: {version: 1} merged
// in, so neither may mention the version field themselves, and update must consist of
// update operators ($set, $unset, $inc, ...), not a replacement document.
//
// No match returns ErrConflict (wrapped): the document was changed or deleted since it
// was read. A unique-index violation returns an error IsDuplicateKey recognises.
//
// The check and the write are one atomic step on MongoDB, and on FerretDB reached through
// embedded.Mongo, which serialises writes. FerretDB v1 on its own applies an update as
// read, modify, write back, so concurrent writers there could all "win".
func UpdateVersioned(ctx context.Context, coll *mongo.Collection, filter bson.M, version int64, update bson.M) error {
	if _, ok := filter[VersionField]; ok {
		return fmt.Errorf("update %s: %w: filter sets %q itself", coll.Name(), errBadUpdate, VersionField)
	}
	u, err := withVersionInc(update)
	if err != nil {
		return fmt.Errorf("update %s: %w", coll.Name(), err)
	}
	f := maps.Clone(filter)
	if f == nil {
		f = bson.M{}
	}
	f[VersionField] = version

	res, err := coll.UpdateOne(ctx, f, u)
	if err != nil {
		return fmt.Errorf("update %s at version %d: %w", coll.Name(), version, err)
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("update %s at version %d: %w", coll.Name(), version, ErrConflict)
	}
	return nil
}

// withVersionInc returns a copy of update with $inc: {version: 1} merged in.
func withVersionInc(update bson.M) (bson.M, error) {
	u := make(bson.M, len(update)+1)
	for op, v := range update {
		if !strings.HasPrefix(op, "$") {
			return nil, fmt.Errorf("%w: %q is not an update operator", errBadUpdate, op)
		}
		if mentionsField(v, VersionField) {
			return nil, fmt.Errorf("%w: %s sets %q itself", errBadUpdate, op, VersionField)
		}
		u[op] = v
	}
	inc := bson.M{}
	switch existing := u["$inc"].(type) {
	case nil:
	case bson.M:
		maps.Copy(inc, existing)
	case map[string]any:
		maps.Copy(inc, existing)
	case bson.D:
		for _, e := range existing {
			inc[e.Key] = e.Value
		}
	default:
		return nil, fmt.Errorf("%w: $inc is a %T, want a document", errBadUpdate, existing)
	}
	inc[VersionField] = 1
	u["$inc"] = inc
	return u, nil
}

// mentionsField reports whether an operator's argument document names field (or a path
// inside it). Arguments of other shapes are left for the server to judge.
func mentionsField(arg any, field string) bool {
	hit := func(k string) bool { return k == field || strings.HasPrefix(k, field+".") }
	switch doc := arg.(type) {
	case bson.M:
		for k := range doc {
			if hit(k) {
				return true
			}
		}
	case map[string]any:
		for k := range doc {
			if hit(k) {
				return true
			}
		}
	case bson.D:
		for _, e := range doc {
			if hit(e.Key) {
				return true
			}
		}
	}
	return false
}
