// Package mongostore keeps the integrations service's records in MongoDB.
package mongostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/services/integrations/internal/app"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

// CodeHostStore is app.CodeHostStore on a database: installations by id, and the records
// of deliveries by delivery id. Neither holds secrets.
type CodeHostStore struct {
	installations *mongo.Collection
	deliveries    *mongo.Collection
}

var _ app.CodeHostStore = (*CodeHostStore)(nil)

// NewCodeHostStore returns the store over db.
func NewCodeHostStore(db *mongo.Database) *CodeHostStore {
	return &CodeHostStore{installations: db.Collection("codehost_installations"), deliveries: db.Collection("codehost_deliveries")}
}

// EnsureIndexes creates the store's indexes: installations by team (the list of a team's
// integrations, a deleted team's unlinking) and deliveries by receipt (the purge).
func (s *CodeHostStore) EnsureIndexes(ctx context.Context) error {
	if err := mongox.EnsureIndexes(ctx, s.installations, mongo.IndexModel{Keys: bson.D{{Key: "team", Value: 1}}}); err != nil {
		return err
	}
	return mongox.EnsureIndexes(ctx, s.deliveries, mongo.IndexModel{Keys: bson.D{{Key: "received", Value: 1}}})
}

type installationDoc struct {
	ID           int64     `bson:"_id"`
	AccountLogin string    `bson:"accountLogin,omitempty"`
	AccountType  string    `bson:"accountType,omitempty"`
	Repositories []string  `bson:"repositories,omitempty"`
	Events       []string  `bson:"events,omitempty"`
	Status       string    `bson:"status,omitempty"`
	Known        bool      `bson:"known"`
	CreatedAt    time.Time `bson:"createdAt,omitempty"`
	Team         string    `bson:"team,omitempty"`
	LinkedBy     string    `bson:"linkedBy,omitempty"`
	LinkedAt     time.Time `bson:"linkedAt,omitempty"`
	LinkIssued   time.Time `bson:"linkIssued,omitempty"`
	Updated      time.Time `bson:"updated"`
	Version      int64     `bson:"version"`
}

func toInstallationDoc(in domain.Installation) installationDoc {
	return installationDoc{ID: in.ID, AccountLogin: in.AccountLogin, AccountType: in.AccountType, Repositories: in.Repositories, Events: in.Events,
		Status: in.Status, Known: in.Known, CreatedAt: in.CreatedAt, Team: in.Team, LinkedBy: in.LinkedBy, LinkedAt: in.LinkedAt,
		LinkIssued: in.LinkIssued, Updated: in.Updated, Version: in.Version}
}

func (d installationDoc) installation() domain.Installation {
	utc := func(t time.Time) time.Time {
		if t.IsZero() {
			return time.Time{}
		}
		return t.UTC()
	}
	return domain.Installation{ID: d.ID, AccountLogin: d.AccountLogin, AccountType: d.AccountType, Repositories: d.Repositories, Events: d.Events,
		Status: d.Status, Known: d.Known, CreatedAt: utc(d.CreatedAt), Team: d.Team, LinkedBy: d.LinkedBy, LinkedAt: utc(d.LinkedAt),
		LinkIssued: utc(d.LinkIssued), Updated: utc(d.Updated), Version: d.Version}
}

// FindInstallation fails with domain.ErrInstallationNotFound.
func (s *CodeHostStore) FindInstallation(ctx context.Context, id int64) (domain.Installation, error) {
	d, err := mongox.FindOne[installationDoc](ctx, s.installations, bson.M{"_id": id})
	if errors.Is(err, mongox.ErrNotFound) {
		return domain.Installation{}, domain.ErrInstallationNotFound
	}
	if err != nil {
		return domain.Installation{}, err
	}
	return d.installation(), nil
}

// FindInstallationsByTeam returns the installations linked to team, by id.
func (s *CodeHostStore) FindInstallationsByTeam(ctx context.Context, team string) ([]domain.Installation, error) {
	docs, err := mongox.FindAll[installationDoc](ctx, s.installations, bson.M{"team": team}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, err
	}
	out := make([]domain.Installation, len(docs))
	for i, d := range docs {
		out[i] = d.installation()
	}
	return out, nil
}

// maxUpdateTries bounds the retries of an update that keeps losing to concurrent writers.
const maxUpdateTries = 32

// UpdateInstallation loads the installation, or a new one, applies fn and writes it back
// on the condition that its version did not change; a lost race is tried again.
func (s *CodeHostStore) UpdateInstallation(ctx context.Context, id int64, fn func(*domain.Installation) error) (domain.Installation, error) {
	for range maxUpdateTries {
		in, err := s.FindInstallation(ctx, id)
		fresh := errors.Is(err, domain.ErrInstallationNotFound)
		switch {
		case fresh:
			in = domain.Installation{ID: id}
		case err != nil:
			return domain.Installation{}, err
		}
		version := in.Version
		if err := fn(&in); err != nil {
			return domain.Installation{}, err
		}
		in.ID, in.Version = id, version+1
		if fresh {
			_, err := s.installations.InsertOne(ctx, toInstallationDoc(in))
			if mongox.IsDuplicateKey(err) {
				continue
			}
			if err != nil {
				return domain.Installation{}, fmt.Errorf("insert installation %d: %w", id, err)
			}
			return in, nil
		}
		res, err := s.installations.ReplaceOne(ctx, bson.M{"_id": id, "version": version}, toInstallationDoc(in))
		if err != nil {
			return domain.Installation{}, fmt.Errorf("update installation %d: %w", id, err)
		}
		if res.MatchedCount == 1 {
			return in, nil
		}
	}
	return domain.Installation{}, apperr.New(apperr.ConcurrentModification, "The code-host installation %d changed while it was being updated; try again.", id)
}

// UnlinkTeam removes every link to team.
func (s *CodeHostStore) UnlinkTeam(ctx context.Context, team string) error {
	_, err := s.installations.UpdateMany(ctx, bson.M{"team": team},
		bson.M{"$unset": bson.M{"team": "", "linkedBy": "", "linkedAt": "", "linkIssued": ""}, "$inc": bson.M{"version": 1}})
	if err != nil {
		return fmt.Errorf("unlink team %s: %w", team, err)
	}
	return nil
}

type deliveryDoc struct {
	ID           string           `bson:"_id"`
	Event        string           `bson:"event"`
	Installation int64            `bson:"installation,omitempty"`
	Received     time.Time        `bson:"received"`
	Runs         []deliveryRunDoc `bson:"runs,omitempty"`
	Refused      []refusalDoc     `bson:"refused,omitempty"`
}

type deliveryRunDoc struct {
	Team     string `bson:"team"`
	Workflow string `bson:"workflow"`
	Key      string `bson:"key"`
}

type refusalDoc struct {
	Team     string `bson:"team"`
	Workflow string `bson:"workflow"`
	Status   int    `bson:"status"`
	Reason   string `bson:"reason"`
	Message  string `bson:"message"`
}

// FindDelivery returns the record of delivery id, found false when there is none.
func (s *CodeHostStore) FindDelivery(ctx context.Context, id string) (domain.Delivery, bool, error) {
	d, err := mongox.FindOne[deliveryDoc](ctx, s.deliveries, bson.M{"_id": id})
	if errors.Is(err, mongox.ErrNotFound) {
		return domain.Delivery{}, false, nil
	}
	if err != nil {
		return domain.Delivery{}, false, err
	}
	out := domain.Delivery{ID: d.ID, Event: d.Event, Installation: d.Installation, Received: d.Received.UTC()}
	for _, r := range d.Runs {
		out.Runs = append(out.Runs, domain.DeliveryRun{Team: r.Team, Workflow: r.Workflow, Key: r.Key})
	}
	for _, r := range d.Refused {
		out.Refused = append(out.Refused, domain.Refusal{Team: r.Team, Workflow: r.Workflow, Status: r.Status, Reason: r.Reason, Message: r.Message})
	}
	return out, true, nil
}

// CreateDelivery records a handled delivery. A record of the same id older than
// domain.DeliveryTTL is replaced, conditionally, so two late deliveries still agree;
// a newer one is domain.ErrDeliveryExists.
func (s *CodeHostStore) CreateDelivery(ctx context.Context, d domain.Delivery) error {
	doc := deliveryDoc{ID: d.ID, Event: d.Event, Installation: d.Installation, Received: d.Received}
	for _, r := range d.Runs {
		doc.Runs = append(doc.Runs, deliveryRunDoc(r))
	}
	for _, r := range d.Refused {
		doc.Refused = append(doc.Refused, refusalDoc(r))
	}
	// An insert first: a filter on _id alone is what the embedded database finds by index,
	// and a delivery id is almost always new.
	_, err := s.deliveries.InsertOne(ctx, doc)
	if err == nil {
		return nil
	}
	if !mongox.IsDuplicateKey(err) {
		return fmt.Errorf("record delivery %s: %w", d.ID, err)
	}
	res, err := s.deliveries.ReplaceOne(ctx, bson.M{"_id": d.ID, "received": bson.M{"$lt": d.Received.Add(-domain.DeliveryTTL)}}, doc)
	if err != nil {
		return fmt.Errorf("record delivery %s again: %w", d.ID, err)
	}
	if res.MatchedCount == 0 {
		return domain.ErrDeliveryExists
	}
	return nil
}

// PurgeDeliveries deletes the records received before before.
func (s *CodeHostStore) PurgeDeliveries(ctx context.Context, before time.Time) error {
	if _, err := s.deliveries.DeleteMany(ctx, bson.M{"received": bson.M{"$lt": before}}); err != nil {
		return fmt.Errorf("purge delivery records: %w", err)
	}
	return nil
}
