package mongostore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/services/runs/internal/domain"
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

// ReadLog returns the chunks of a task run's log from cursor on, through attempt
// attempts, and the cursor after them. Chunks are read one by one by id, which stays fast
// however many logs are kept.
func (s *Store) ReadLog(ctx context.Context, taskRunID string, attempts int, from domain.LogCursor) (string, domain.LogCursor, error) {
	var b strings.Builder
	cur := from
	if cur.Attempt < 1 {
		cur = domain.LogCursor{Attempt: 1}
	}
	for cur.Attempt <= attempts {
		var d struct {
			Text string `bson:"text"`
		}
		err := s.logs.FindOne(ctx, bson.M{"_id": logID(taskRunID, cur.Attempt, cur.Seq)}).Decode(&d)
		if errors.Is(err, mongo.ErrNoDocuments) {
			if cur.Attempt == attempts {
				break // the current attempt may write more
			}
			cur = domain.LogCursor{Attempt: cur.Attempt + 1}
			continue
		}
		if err != nil {
			return "", from, fmt.Errorf("read log of %s: %w", taskRunID, err)
		}
		b.WriteString(d.Text)
		cur.Seq++
	}
	return b.String(), cur, nil
}
