// Package mongostore is the integrations service's storage on MongoDB: the shared one of
// the distributed deployment, or the embedded FerretDB of the tests and of standalone data
// directories made before the service had a SQLite file of its own (sqlitestore).
package mongostore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/services/integrations/internal/app"
)

// Receipts is app.Receipts on the collection `event_receipts`: one document per event (by
// its workflow, source and id) or webhook (by its idempotency key) that started a run,
// found by its _id alone, the one filter the embedded database answers by index.
//
// Records expire after app.ReceiptTTL: a TTL index removes them on MongoDB; the embedded
// database has none, so Purge removes them there, and a record past its life is ignored
// when read, whichever removes it.
type Receipts struct {
	coll *mongo.Collection
	// creates are the inserts of records, made together when they come together: under
	// load, one command for many events.
	creates *mongox.Combiner[receiptDoc, error]
}

// maxCreates bounds the records one insert carries.
const maxCreates = 100

type receiptDoc struct {
	ID       string `bson:"_id"`
	Team     string `bson:"team"`
	Workflow string `bson:"workflow"`
	RunID    string `bson:"runId"`
	// Run is the run as first answered, as its JSON: it is answered as it is, never
	// queried.
	Run     []byte    `bson:"run"`
	Created time.Time `bson:"created"`
}

// NewReceipts returns the records in db.
func NewReceipts(db *mongo.Database) *Receipts {
	s := &Receipts{coll: db.Collection("event_receipts")}
	s.creates = mongox.NewCombiner(maxCreates, s.insertAll)
	return s
}

// EnsureIndexes creates the TTL index that expires records on MongoDB. The embedded
// database does not implement TTL indexes: there Purge does the work.
func (s *Receipts) EnsureIndexes(ctx context.Context) error {
	err := mongox.EnsureIndexes(ctx, s.coll, mongo.IndexModel{
		Keys:    bson.D{{Key: "created", Value: 1}},
		Options: options.Index().SetExpireAfterSeconds(int32(app.ReceiptTTL / time.Second)),
	})
	if err != nil && notImplemented(err) {
		return nil
	}
	return err
}

// notImplemented reports whether the server refused a command as not implemented.
func notImplemented(err error) bool {
	var ce mongo.CommandError
	return errors.As(err, &ce) && (ce.Code == 238 || ce.Name == "NotImplemented")
}

// FindReceipt answers the record of key made at or after since.
func (s *Receipts) FindReceipt(ctx context.Context, key string, since time.Time) (app.Receipt, bool, error) {
	d, err := mongox.FindOne[receiptDoc](ctx, s.coll, bson.M{"_id": key})
	switch {
	case errors.Is(err, mongox.ErrNotFound):
		return app.Receipt{}, false, nil
	case err != nil:
		return app.Receipt{}, false, fmt.Errorf("read delivery %s: %w", key, err)
	case d.Created.Before(since):
		return app.Receipt{}, false, nil
	}
	var run events.WorkflowRun
	if err := json.Unmarshal(d.Run, &run); err != nil {
		return app.Receipt{}, false, fmt.Errorf("read delivery %s: its run: %w", key, err)
	}
	return app.Receipt{Key: d.ID, Team: d.Team, Workflow: d.Workflow, Run: &run, Created: d.Created}, true, nil
}

// CreateReceipt stores d, keeping a record of its key made at or after since and
// replacing an older one.
func (s *Receipts) CreateReceipt(ctx context.Context, d app.Receipt, since time.Time) error {
	run, err := json.Marshal(d.Run)
	if err != nil {
		return fmt.Errorf("record delivery %s: %w", d.Key, err)
	}
	doc := receiptDoc{ID: d.Key, Team: d.Team, Workflow: d.Workflow, RunID: d.Run.ID, Run: run, Created: d.Created.UTC()}
	err = s.creates.Do(ctx, doc)
	if !errors.Is(err, errDuplicate) {
		return err
	}
	// A record of the key is there: a twin's (kept) or one past its life (replaced, on
	// the condition that it is still the one read).
	old, err := mongox.FindOne[receiptDoc](ctx, s.coll, bson.M{"_id": d.Key})
	switch {
	case errors.Is(err, mongox.ErrNotFound):
		return s.creates.Do(ctx, doc)
	case err != nil:
		return fmt.Errorf("record delivery %s: %w", d.Key, err)
	case !old.Created.Before(since):
		return nil
	}
	if _, err := s.coll.ReplaceOne(ctx, bson.M{"_id": d.Key, "created": old.Created}, doc); err != nil {
		return fmt.Errorf("record delivery %s: %w", d.Key, err)
	}
	return nil
}

// errDuplicate is the answer of an insert whose _id is taken.
var errDuplicate = errors.New("a record of the key exists")

// insertAll inserts docs unordered and answers each one's error: a duplicate key as
// itself, for CreateReceipt to settle. A command that fails as a whole is tried again one
// document at a time, so each gets its own answer.
func (s *Receipts) insertAll(ctx context.Context, docs []receiptDoc) []error {
	errs := make([]error, len(docs))
	all := make([]any, len(docs))
	for i := range docs {
		all[i] = docs[i]
	}
	_, err := s.coll.InsertMany(ctx, all, options.InsertMany().SetOrdered(false))
	var bw mongo.BulkWriteException
	switch {
	case err == nil:
	case errors.As(err, &bw) && bw.WriteConcernError == nil && len(bw.WriteErrors) > 0:
		for _, we := range bw.WriteErrors {
			if we.Code == 11000 {
				errs[we.Index] = errDuplicate
				continue
			}
			errs[we.Index] = fmt.Errorf("record delivery %s: %w", docs[we.Index].ID, we)
		}
	default:
		for i := range docs {
			_, err := s.coll.InsertOne(ctx, docs[i])
			switch {
			case mongox.IsDuplicateKey(err):
				errs[i] = errDuplicate
			case err != nil:
				errs[i] = fmt.Errorf("record delivery %s: %w", docs[i].ID, err)
			}
		}
	}
	return errs
}

// Purge removes the records made before since.
func (s *Receipts) Purge(ctx context.Context, since time.Time) error {
	if _, err := s.coll.DeleteMany(ctx, bson.M{"created": bson.M{"$lt": since}}); err != nil {
		return fmt.Errorf("purge event receipts: %w", err)
	}
	return nil
}
