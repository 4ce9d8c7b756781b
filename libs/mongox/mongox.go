// Package mongox holds the few helpers every Mongo-backed store needs on top of
// mongo-driver v2: connecting, ensuring indexes, recognising duplicate keys, optimistic
// concurrency on a version field, and typed single-document reads.
//
// Everything here works on MongoDB and on FerretDB v1 (SQLite), which Baton embeds for
// standalone mode and tests; where the two differ, the doc comment says so.
//
// Performance on FerretDB v1: only a filter that is exactly {_id: <string or ObjectID>}
// reaches SQLite as a lookup. Any other filter, {_id, version} included, is evaluated in
// Go over the whole collection (about 20 µs per document on a small VM), and secondary
// indexes only enforce uniqueness. Keep collections used in standalone mode modest, and
// prefer string or ObjectID identifiers.
package mongox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
)

// Timeouts Connect applies; operations themselves are bounded by their contexts.
const (
	ServerSelectionTimeout = 5 * time.Second
	ConnectTimeout         = 5 * time.Second
)

var (
	// ErrNotFound means no document matched.
	ErrNotFound = errors.New("document not found")
	// ErrConflict means a versioned update found no document at the expected version:
	// someone else updated (or deleted) it since it was read.
	ErrConflict = errors.New("version conflict")
)

// Connect connects to uri and pings the primary, so a bad address or a server that is
// down fails here rather than on first use. Server selection and connecting each give up
// after 5 s unless ctx ends sooner.
func Connect(ctx context.Context, uri string) (*mongo.Client, error) {
	opts := options.Client().
		ApplyURI(uri).
		SetServerSelectionTimeout(ServerSelectionTimeout).
		SetConnectTimeout(ConnectTimeout)
	client, err := mongo.Connect(opts)
	if err != nil {
		return nil, fmt.Errorf("connect to mongo: %w", err)
	}
	if err := Ping(ctx, client); err != nil {
		// Disconnect with a fresh context: ctx may be the one that just expired.
		_ = client.Disconnect(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("connect to mongo: %w", err)
	}
	return client, nil
}

// Ping checks that the primary answers, for readiness probes.
func Ping(ctx context.Context, client *mongo.Client) error {
	if err := client.Ping(ctx, readpref.Primary()); err != nil {
		return fmt.Errorf("ping mongo: %w", err)
	}
	return nil
}

// EnsureIndexes creates the indexes that do not exist yet; creating an identical index
// again is a no-op, so it is safe to call at every start-up.
//
// It sends one createIndexes per model: FerretDB v1 mishandles a batch in which two or
// more indexes already exist (it panics, dropping the connection, or skips the wrong
// index). Index builds are a start-up cost, so the extra round trips do not matter.
//
// Changing an existing index is not done here: MongoDB answers an index that exists with
// other options under the same name with an IndexOptionsConflict/IndexKeySpecsConflict
// error, while FerretDB v1 silently keeps the old one. Drop it explicitly first.
//
// FerretDB v1 supports only ascending/descending keys (including compound and dotted
// paths) and the unique option; "sparse" is accepted and ignored, and TTL
// (expireAfterSeconds), partialFilterExpression, collation, hidden, text, hashed and
// geo indexes fail as not implemented. It uses indexes to enforce uniqueness only, never
// to answer queries: see the package documentation.
func EnsureIndexes(ctx context.Context, coll *mongo.Collection, models ...mongo.IndexModel) error {
	for _, model := range models {
		if _, err := coll.Indexes().CreateOne(ctx, model); err != nil {
			return fmt.Errorf("ensure indexes on %s: %w", coll.Name(), err)
		}
	}
	return nil
}

// FindOne decodes the first document matching filter into a T. It returns ErrNotFound
// (wrapped) when nothing matches, and the zero T with any error.
func FindOne[T any](ctx context.Context, coll *mongo.Collection, filter any, opts ...options.Lister[options.FindOneOptions]) (T, error) {
	var v T
	err := coll.FindOne(ctx, filter, opts...).Decode(&v)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		var zero T
		return zero, fmt.Errorf("find one in %s: %w", coll.Name(), ErrNotFound)
	case err != nil:
		var zero T
		return zero, fmt.Errorf("find one in %s: %w", coll.Name(), err)
	}
	return v, nil
}

// Sort orders a paged find: by Field (Desc for descending), then by Tiebreak in the same
// direction so pages never overlap or skip documents with equal values.
type Sort struct {
	Field    string
	Tiebreak string
	Desc     bool
}

// FindPage returns the documents of one page of filter in order, decoded as T, and how
// many documents match in all (exact on every page).
func FindPage[T any](ctx context.Context, coll *mongo.Collection, filter any, sort Sort, offset, limit int64) ([]T, int64, error) {
	total, err := coll.CountDocuments(ctx, filter)
	if err != nil {
		return nil, 0, fmt.Errorf("count %s: %w", coll.Name(), err)
	}
	dir := 1
	if sort.Desc {
		dir = -1
	}
	order := bson.D{{Key: sort.Field, Value: dir}}
	if sort.Tiebreak != "" && sort.Tiebreak != sort.Field {
		order = append(order, bson.E{Key: sort.Tiebreak, Value: dir})
	}
	docs, err := FindAll[T](ctx, coll, filter, options.Find().SetSort(order).SetSkip(offset).SetLimit(limit))
	return docs, total, err
}

// FindAll decodes every document matching filter into a T.
func FindAll[T any](ctx context.Context, coll *mongo.Collection, filter any, opts ...options.Lister[options.FindOptions]) ([]T, error) {
	cur, err := coll.Find(ctx, filter, opts...)
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", coll.Name(), err)
	}
	var docs []T
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read %s: %w", coll.Name(), err)
	}
	return docs, nil
}
