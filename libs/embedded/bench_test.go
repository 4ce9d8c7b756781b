package embedded_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// BenchmarkMongoCommands measures commands one at a time on the embedded store, each by
// _id in a collection of 1,000 documents of 2 KB (about a page of task runs): what each
// of the engine's writes and reads costs a run whose path it is on.
func BenchmarkMongoCommands(b *testing.B) {
	const docs = 1000
	m := startMongo(b, b.TempDir())
	coll := connect(b, m.URI()).Database("bench").Collection("docs")
	body := strings.Repeat("x", 2048)
	seed := make([]any, docs)
	for i := range seed {
		seed[i] = bson.M{"_id": fmt.Sprint(i), "version": 0, "body": body}
	}
	_, err := coll.InsertMany(b.Context(), seed)
	require.NoError(b, err)
	b.Run("find", func(b *testing.B) {
		for i := range b.N {
			require.NoError(b, coll.FindOne(b.Context(), bson.M{"_id": fmt.Sprint(i % docs)}).Err())
		}
	})
	b.Run("replace", func(b *testing.B) {
		for i := range b.N {
			id := fmt.Sprint(i % docs)
			res, err := coll.ReplaceOne(b.Context(), bson.M{"_id": id}, bson.M{"_id": id, "version": i + 1, "body": body})
			require.NoError(b, err)
			require.EqualValues(b, 1, res.MatchedCount)
		}
	})
	b.Run("insert", func(b *testing.B) {
		for i := range b.N {
			_, err := coll.InsertOne(b.Context(), bson.M{"_id": fmt.Sprintf("new-%d", i), "body": body})
			require.NoError(b, err)
		}
		b.StopTimer()
		_, err := coll.DeleteMany(b.Context(), bson.M{"_id": bson.M{"$regex": "^new-"}})
		require.NoError(b, err)
	})
	b.Run("delete", func(b *testing.B) {
		b.StopTimer()
		extra := make([]any, b.N)
		for i := range extra {
			extra[i] = bson.M{"_id": fmt.Sprintf("gone-%d", i), "body": body}
		}
		_, err := coll.InsertMany(b.Context(), extra)
		require.NoError(b, err)
		b.StartTimer()
		for i := range b.N {
			res, err := coll.DeleteOne(b.Context(), bson.M{"_id": fmt.Sprintf("gone-%d", i)})
			require.NoError(b, err)
			require.EqualValues(b, 1, res.DeletedCount)
		}
	})
}
