package mongox_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// connect returns a client of the test's own, disconnected when the test ends.
func connect(t *testing.T) *mongo.Client {
	t.Helper()
	c, err := mongox.Connect(t.Context(), testkit.MongoURI(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return c
}

// collection returns an empty collection in a database of the test's own.
func collection(t *testing.T) *mongo.Collection {
	t.Helper()
	return connect(t).Database(testkit.Database(t)).Collection("items")
}

// isFerretDB reports whether the server is FerretDB, whose buildInfo names its version.
func isFerretDB(t *testing.T, coll *mongo.Collection) bool {
	t.Helper()
	var info bson.M
	require.NoError(t, coll.Database().RunCommand(t.Context(), bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info))
	_, ok := info["ferretdbVersion"]
	return ok
}

func TestConnect(t *testing.T) {
	t.Parallel()
	uri := testkit.MongoURI(t)
	tests := []struct {
		name    string
		uri     string
		timeout time.Duration
		wantErr bool
	}{
		{name: "running server", uri: uri, timeout: 10 * time.Second},
		{name: "not a mongodb URI", uri: "http://localhost", timeout: time.Second, wantErr: true},
		// Port 1 refuses connections; ctx ends the wait before server selection's 5 s.
		{name: "nothing listening", uri: "mongodb://127.0.0.1:1/", timeout: 300 * time.Millisecond, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), tt.timeout)
			defer cancel()
			c, err := mongox.Connect(ctx, tt.uri)
			if tt.wantErr {
				require.Error(t, err)
				assert.Nil(t, c)
				return
			}
			require.NoError(t, err)
			defer func() { _ = c.Disconnect(context.Background()) }()
			assert.NoError(t, mongox.Ping(ctx, c))
		})
	}
}

func TestPingFailsAfterDisconnect(t *testing.T) {
	t.Parallel()
	c := connect(t)
	require.NoError(t, c.Disconnect(t.Context()))
	assert.Error(t, mongox.Ping(t.Context(), c))
}

func TestEnsureIndexes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	coll := collection(t)
	models := []mongo.IndexModel{
		{Keys: bson.D{{Key: "key", Value: 1}}, Options: options.Index().SetUnique(true).SetName("key_unique")},
		{Keys: bson.D{{Key: "owner", Value: 1}, {Key: "created", Value: -1}}},
	}

	require.NoError(t, mongox.EnsureIndexes(ctx, coll, models...))
	require.NoError(t, mongox.EnsureIndexes(ctx, coll, models...), "second run must be a no-op")
	require.NoError(t, mongox.EnsureIndexes(ctx, coll), "no models")
	// Two existing indexes and a new one in one call: the batch FerretDB gets wrong.
	models = append(models, mongo.IndexModel{Keys: bson.D{{Key: "state", Value: 1}}})
	require.NoError(t, mongox.EnsureIndexes(ctx, coll, models...))

	var specs []mongo.IndexSpecification
	specs, err := coll.Indexes().ListSpecifications(ctx)
	require.NoError(t, err)
	names := map[string]bool{}
	for _, s := range specs {
		names[s.Name] = true
	}
	assert.Equal(t, map[string]bool{"_id_": true, "key_unique": true, "owner_1_created_-1": true, "state_1": true}, names)

	_, err = coll.InsertOne(ctx, bson.M{"key": "a"})
	require.NoError(t, err)
	_, err = coll.InsertOne(ctx, bson.M{"key": "a"})
	assert.True(t, mongox.IsDuplicateKey(err), "unique index enforced: %v", err)

	// The same keys under another name conflict on MongoDB and FerretDB alike.
	err = mongox.EnsureIndexes(ctx, coll, mongo.IndexModel{
		Keys: bson.D{{Key: "key", Value: 1}}, Options: options.Index().SetUnique(true).SetName("other"),
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), coll.Name())
}

func TestIsDuplicateKey(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	coll := collection(t)
	require.NoError(t, mongox.EnsureIndexes(ctx, coll, mongo.IndexModel{
		Keys: bson.D{{Key: "key", Value: 1}}, Options: options.Index().SetUnique(true),
	}))
	_, err := coll.InsertMany(ctx, []any{bson.M{"_id": 1, "key": "a"}, bson.M{"_id": 2, "key": "b"}})
	require.NoError(t, err)

	writeErr := func(code int) error {
		return mongo.WriteException{WriteErrors: mongo.WriteErrors{{Code: code, Message: "x"}}}
	}
	tests := []struct {
		name string
		give func() error
		want bool
	}{
		{name: "nil", give: func() error { return nil }, want: false},
		{name: "plain error", give: func() error { return errors.New("E11000 but not a server error") }, want: false},
		{name: "other write error", give: func() error { return writeErr(121) }, want: false},
		{name: "insert duplicate _id", give: func() error {
			_, err := coll.InsertOne(ctx, bson.M{"_id": 1, "key": "z"})
			return err
		}, want: true},
		{name: "insert duplicate unique key", give: func() error {
			_, err := coll.InsertOne(ctx, bson.M{"key": "a"})
			return err
		}, want: true},
		{name: "InsertMany", give: func() error {
			_, err := coll.InsertMany(ctx, []any{bson.M{"key": "c"}, bson.M{"key": "a"}})
			return err
		}, want: true},
		{name: "BulkWrite", give: func() error {
			_, err := coll.BulkWrite(ctx, []mongo.WriteModel{mongo.NewInsertOneModel().SetDocument(bson.M{"key": "b"})})
			return err
		}, want: true},
		{name: "UpdateOne", give: func() error {
			_, err := coll.UpdateOne(ctx, bson.M{"_id": 2}, bson.M{"$set": bson.M{"key": "a"}})
			return err
		}, want: true},
		{name: "upsert", give: func() error {
			_, err := coll.UpdateOne(ctx, bson.M{"_id": 9}, bson.M{"$set": bson.M{"key": "a"}}, options.UpdateOne().SetUpsert(true))
			return err
		}, want: true},
		{name: "FindOneAndUpdate", give: func() error {
			return coll.FindOneAndUpdate(ctx, bson.M{"_id": 2}, bson.M{"$set": bson.M{"key": "a"}}).Err()
		}, want: true},
		{name: "wrapped", give: func() error {
			_, err := coll.InsertOne(ctx, bson.M{"_id": 1})
			return fmt.Errorf("create item: %w", err)
		}, want: true},
		{name: "client bulk write", give: func() error {
			return mongo.ClientBulkWriteException{WriteErrors: map[int]mongo.WriteError{0: {Code: 11000}}}
		}, want: true},
		{name: "client bulk write, other code", give: func() error {
			return mongo.ClientBulkWriteException{WriteErrors: map[int]mongo.WriteError{0: {Code: 2}}}
		}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.give()
			assert.Equal(t, tt.want, mongox.IsDuplicateKey(err), "%v", err)
		})
	}
}

type item struct {
	ID      string `bson:"_id"`
	Name    string `bson:"name"`
	Count   int    `bson:"count"`
	Version int64  `bson:"version"`
}

func TestUpdateVersioned(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		version     int64
		filter      bson.M
		update      bson.M
		wantErr     error // nil: success; errAny: an error that is not ErrConflict
		wantName    string
		wantCount   int
		wantVersion int64
	}{
		{
			name: "current version", version: 3, filter: bson.M{"_id": "x"},
			update:   bson.M{"$set": bson.M{"name": "new"}},
			wantName: "new", wantCount: 1, wantVersion: 4,
		},
		{
			name: "merges the caller's $inc", version: 3, filter: bson.M{"_id": "x"},
			update:   bson.M{"$set": bson.M{"name": "new"}, "$inc": bson.M{"count": 2}},
			wantName: "new", wantCount: 3, wantVersion: 4,
		},
		{
			name: "$inc as bson.D", version: 3, filter: bson.M{"_id": "x"},
			update:   bson.M{"$inc": bson.D{{Key: "count", Value: 5}}},
			wantName: "old", wantCount: 6, wantVersion: 4,
		},
		{
			name: "stale version", version: 2, filter: bson.M{"_id": "x"},
			update:  bson.M{"$set": bson.M{"name": "new"}},
			wantErr: mongox.ErrConflict, wantName: "old", wantCount: 1, wantVersion: 3,
		},
		{
			name: "no such document", version: 3, filter: bson.M{"_id": "gone"},
			update:  bson.M{"$set": bson.M{"name": "new"}},
			wantErr: mongox.ErrConflict, wantName: "old", wantCount: 1, wantVersion: 3,
		},
		{
			name: "filter names version", version: 3, filter: bson.M{"_id": "x", "version": 3},
			update:  bson.M{"$set": bson.M{"name": "new"}},
			wantErr: errAny, wantName: "old", wantCount: 1, wantVersion: 3,
		},
		{
			name: "update sets version", version: 3, filter: bson.M{"_id": "x"},
			update:  bson.M{"$set": bson.M{"version": 10}},
			wantErr: errAny, wantName: "old", wantCount: 1, wantVersion: 3,
		},
		{
			name: "replacement document", version: 3, filter: bson.M{"_id": "x"},
			update:  bson.M{"name": "new"},
			wantErr: errAny, wantName: "old", wantCount: 1, wantVersion: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			coll := collection(t)
			_, err := coll.InsertOne(ctx, item{ID: "x", Name: "old", Count: 1, Version: 3})
			require.NoError(t, err)

			err = mongox.UpdateVersioned(ctx, coll, tt.filter, tt.version, tt.update)
			switch tt.wantErr {
			case nil:
				require.NoError(t, err)
			case errAny:
				require.Error(t, err)
				assert.NotErrorIs(t, err, mongox.ErrConflict)
			default:
				require.ErrorIs(t, err, tt.wantErr)
				assert.Contains(t, err.Error(), coll.Name())
			}

			got, err := mongox.FindOne[item](ctx, coll, bson.M{"_id": "x"})
			require.NoError(t, err)
			assert.Equal(t, item{ID: "x", Name: tt.wantName, Count: tt.wantCount, Version: tt.wantVersion}, got)
		})
	}
}

func TestUpdateVersionedMatchesAnyIntegerWidth(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	coll := collection(t)
	// A Go int small enough is stored as a BSON int32; the int64 filter must still match.
	_, err := coll.InsertOne(ctx, bson.M{"_id": "x", "version": int32(1)})
	require.NoError(t, err)
	require.NoError(t, mongox.UpdateVersioned(ctx, coll, bson.M{"_id": "x"}, 1, bson.M{}))
	got, err := mongox.FindOne[item](ctx, coll, bson.M{"_id": "x"})
	require.NoError(t, err)
	assert.EqualValues(t, 2, got.Version)
}

// errAny stands for "some error other than the sentinels" in table tests.
var errAny = errors.New("any error")

func TestUpdateVersionedOneWriterWins(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	coll := collection(t)
	_, err := coll.InsertOne(ctx, item{ID: "x", Version: 1})
	require.NoError(t, err)

	const writers = 8
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			errs <- mongox.UpdateVersioned(ctx, coll, bson.M{"_id": "x"}, 1, bson.M{"$set": bson.M{"name": fmt.Sprint(i)}})
		})
	}
	wg.Wait()
	close(errs)
	var won, conflicted int
	for err := range errs {
		switch {
		case err == nil:
			won++
		case errors.Is(err, mongox.ErrConflict):
			conflicted++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	assert.Equal(t, 1, won)
	assert.Equal(t, writers-1, conflicted)
}

func TestFindOne(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	coll := collection(t)
	_, err := coll.InsertMany(ctx, []any{
		item{ID: "a", Name: "first", Count: 1, Version: 1},
		item{ID: "b", Name: "second", Count: 2, Version: 1},
	})
	require.NoError(t, err)

	tests := []struct {
		name    string
		filter  any
		opts    []options.Lister[options.FindOneOptions]
		want    item
		wantErr error
	}{
		{name: "by id", filter: bson.M{"_id": "b"}, want: item{ID: "b", Name: "second", Count: 2, Version: 1}},
		{
			name: "sorted, projected", filter: bson.M{},
			opts: []options.Lister[options.FindOneOptions]{options.FindOne().SetSort(bson.D{{Key: "count", Value: -1}}).SetProjection(bson.M{"name": 1})},
			want: item{ID: "b", Name: "second"},
		},
		{name: "missing", filter: bson.M{"_id": "zzz"}, wantErr: mongox.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mongox.FindOne[item](ctx, coll, tt.filter, tt.opts...)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Contains(t, err.Error(), coll.Name())
				assert.Zero(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}

	t.Run("pointer type", func(t *testing.T) {
		got, err := mongox.FindOne[*item](ctx, coll, bson.M{"_id": "a"})
		require.NoError(t, err)
		require.NotNil(t, got)
		assert.Equal(t, "first", got.Name)
	})
}

// TestFerretDBQuirks pins down the FerretDB v1 differences the doc comments promise, so
// an upgrade that changes them is noticed. It says nothing about MongoDB.
func TestFerretDBQuirks(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	coll := collection(t)
	if !isFerretDB(t, coll) {
		t.Skip("server is not FerretDB")
	}

	t.Run("unsupported index options", func(t *testing.T) {
		for _, opts := range []*options.IndexOptionsBuilder{
			options.Index().SetExpireAfterSeconds(60),
			options.Index().SetPartialFilterExpression(bson.M{"p": bson.M{"$exists": true}}),
		} {
			err := mongox.EnsureIndexes(ctx, coll, mongo.IndexModel{Keys: bson.D{{Key: "p", Value: 1}}, Options: opts})
			assert.ErrorContains(t, err, "not implemented")
		}
	})

	t.Run("unique index admits many documents without the field", func(t *testing.T) {
		c := coll.Database().Collection("sparse")
		require.NoError(t, mongox.EnsureIndexes(ctx, c, mongo.IndexModel{
			Keys: bson.D{{Key: "u", Value: 1}}, Options: options.Index().SetUnique(true),
		}))
		_, err := c.InsertMany(ctx, []any{bson.M{"n": 1}, bson.M{"n": 2}})
		assert.NoError(t, err, "MongoDB would report a duplicate key here")
	})

	t.Run("duplicate key from an update is an InternalError", func(t *testing.T) {
		c := coll.Database().Collection("upd")
		require.NoError(t, mongox.EnsureIndexes(ctx, c, mongo.IndexModel{
			Keys: bson.D{{Key: "u", Value: 1}}, Options: options.Index().SetUnique(true),
		}))
		_, err := c.InsertMany(ctx, []any{bson.M{"_id": 1, "u": 1}, bson.M{"_id": 2, "u": 2}})
		require.NoError(t, err)
		_, err = c.UpdateOne(ctx, bson.M{"_id": 2}, bson.M{"$set": bson.M{"u": 1}})
		var ce mongo.CommandError
		require.ErrorAs(t, err, &ce)
		assert.EqualValues(t, 1, ce.Code)
		assert.False(t, mongo.IsDuplicateKeyError(err), "the driver's check misses it")
		assert.True(t, mongox.IsDuplicateKey(err))
	})

	t.Run("database names are limited to 63 characters", func(t *testing.T) {
		long := "t" + fmt.Sprintf("%063d", 0)
		_, err := coll.Database().Client().Database(long).Collection("x").InsertOne(ctx, bson.M{})
		assert.ErrorContains(t, err, "Invalid namespace")
	})
}

func TestFindPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, err := mongox.Connect(ctx, testkit.MongoURI(t))
	require.NoError(t, err)
	defer client.Disconnect(ctx)
	coll := client.Database(testkit.Database(t)).Collection("items")
	// Equal names make the tiebreak decide; pages must neither overlap nor skip.
	for i, name := range []string{"b", "a", "b", "c", "a"} {
		_, err := coll.InsertOne(ctx, bson.M{"_id": i, "name": name, "kind": "x"})
		require.NoError(t, err)
	}
	type doc struct {
		ID   int    `bson:"_id"`
		Name string `bson:"name"`
	}
	tests := []struct {
		name    string
		sort    mongox.Sort
		offset  int64
		limit   int64
		wantIDs []int
	}{
		{"first page ascending", mongox.Sort{Field: "name", Tiebreak: "_id"}, 0, 2, []int{1, 4}},
		{"second page ascending", mongox.Sort{Field: "name", Tiebreak: "_id"}, 2, 2, []int{0, 2}},
		{"last page ascending", mongox.Sort{Field: "name", Tiebreak: "_id"}, 4, 2, []int{3}},
		{"descending", mongox.Sort{Field: "name", Tiebreak: "_id", Desc: true}, 0, 3, []int{3, 2, 0}},
		{"beyond the end", mongox.Sort{Field: "name"}, 10, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, total, err := mongox.FindPage[doc](ctx, coll, bson.M{"kind": "x"}, tt.sort, tt.offset, tt.limit)
			require.NoError(t, err)
			assert.EqualValues(t, 5, total)
			var ids []int
			for _, d := range docs {
				ids = append(ids, d.ID)
			}
			assert.Equal(t, tt.wantIDs, ids)
		})
	}
}
