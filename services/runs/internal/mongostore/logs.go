package mongostore

import (
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/mongox"
)

// A task run's log is kept as chunks, one document each, whose ids sort in order:
// "<taskRunId>/<attempt>/<seq>", zero-padded. A chunk delivered twice lands on the same id.

func logID(taskRunID string, attempt, seq int) string {
	return fmt.Sprintf("%s/%04d/%09d", taskRunID, attempt, seq)
}

// AppendLog stores one chunk of an attempt's log.
func (s *Store) AppendLog(ctx context.Context, taskRunID string, attempt, seq int, text string) error {
	_, err := s.logs.InsertOne(ctx, bson.M{"_id": logID(taskRunID, attempt, seq), "text": text})
	if err != nil && !mongox.IsDuplicateKey(err) {
		return fmt.Errorf("append log of %s: %w", taskRunID, err)
	}
	return nil
}

// ReadLog returns a task run's log chunks after the chunk id after ("" from the start),
// in order, and the id of the last one returned.
func (s *Store) ReadLog(ctx context.Context, taskRunID, after string) (string, string, error) {
	lo := taskRunID + "/"
	filter := bson.M{"$gte": lo, "$lt": taskRunID + "0"}
	if after != "" {
		filter = bson.M{"$gt": after, "$lt": taskRunID + "0"}
	}
	cur, err := s.logs.Find(ctx, bson.M{"_id": filter}, options.Find().SetSort(bson.M{"_id": 1}))
	if err != nil {
		return "", after, fmt.Errorf("read log of %s: %w", taskRunID, err)
	}
	var docs []struct {
		ID   string `bson:"_id"`
		Text string `bson:"text"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return "", after, fmt.Errorf("read log of %s: %w", taskRunID, err)
	}
	var b strings.Builder
	last := after
	for _, d := range docs {
		b.WriteString(d.Text)
		last = d.ID
	}
	return b.String(), last, nil
}
