// Package mongostore keeps the workflows service's records in its own MongoDB database.
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
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// TeamsCollection holds the known teams, one document per name.
const TeamsCollection = "teams"

type teamDoc struct {
	Name         string    `bson:"_id"`
	ID           string    `bson:"teamId"`
	DisplayName  string    `bson:"displayName"`
	CreationDate time.Time `bson:"creationDate"`
}

// Teams is the Mongo TeamStore.
type Teams struct {
	coll *mongo.Collection
}

// NewTeams returns the store over db.
func NewTeams(db *mongo.Database) *Teams {
	return &Teams{coll: db.Collection(TeamsCollection)}
}

// SaveTeam upserts the record of t by name.
func (s *Teams) SaveTeam(ctx context.Context, t domain.Team) error {
	doc := teamDoc{Name: t.Name, ID: t.ID, DisplayName: t.DisplayName, CreationDate: t.CreationDate}
	_, err := s.coll.ReplaceOne(ctx, bson.M{"_id": t.Name}, doc, options.Replace().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("save team %s: %w", t.Name, err)
	}
	return nil
}

// DeleteTeam removes the record of name if it is the incarnation id.
func (s *Teams) DeleteTeam(ctx context.Context, name, id string) error {
	if _, err := s.coll.DeleteOne(ctx, bson.M{"_id": name, "teamId": id}); err != nil {
		return fmt.Errorf("delete team %s: %w", name, err)
	}
	return nil
}

// FindTeamByName returns the known team called name.
func (s *Teams) FindTeamByName(ctx context.Context, name string) (domain.Team, error) {
	doc, err := mongox.FindOne[teamDoc](ctx, s.coll, bson.M{"_id": name})
	if errors.Is(err, mongox.ErrNotFound) {
		return domain.Team{}, apperr.New(apperr.TeamNotFound, "Team '%s' was not found.", name)
	}
	if err != nil {
		return domain.Team{}, fmt.Errorf("find team %s: %w", name, err)
	}
	return domain.Team{ID: doc.ID, Name: doc.Name, DisplayName: doc.DisplayName, CreationDate: doc.CreationDate.UTC()}, nil
}
