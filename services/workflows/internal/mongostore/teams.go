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

// TeamsCollection holds the known teams, one document per name. It stays as small as the
// number of teams, which makes it the place for the per-team workflow counter: FerretDB
// evaluates conditional filters by reading the whole collection.
const TeamsCollection = "teams"

type teamDoc struct {
	Name         string    `bson:"_id"`
	ID           string    `bson:"teamId"`
	DisplayName  string    `bson:"displayName"`
	CreationDate time.Time `bson:"creationDate"`
	// WorkflowCount counts the team's workflows against its maxWorkflowCount quota.
	WorkflowCount int `bson:"workflowCount"`
}

// Teams is the Mongo TeamStore.
type Teams struct {
	coll *mongo.Collection
}

// NewTeams returns the store over db.
func NewTeams(db *mongo.Database) *Teams {
	return &Teams{coll: db.Collection(TeamsCollection)}
}

// SaveTeam upserts the record of t by name, keeping its workflow counter.
func (s *Teams) SaveTeam(ctx context.Context, t domain.Team) error {
	_, err := s.coll.UpdateOne(ctx, bson.M{"_id": t.Name}, bson.M{
		"$set":         bson.M{"teamId": t.ID, "displayName": t.DisplayName, "creationDate": t.CreationDate},
		"$setOnInsert": bson.M{"workflowCount": 0},
	}, options.UpdateOne().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("save team %s: %w", t.Name, err)
	}
	return nil
}

// DeleteTeam removes the record of name if it is the incarnation id.
func (s *Teams) DeleteTeam(ctx context.Context, name, id string) error {
	_, err := s.coll.DeleteOne(ctx, bson.M{"_id": name, "teamId": id})
	if err != nil {
		return fmt.Errorf("delete team %s: %w", name, err)
	}
	return nil
}

// FindTeamByName returns the known team called name.
func (s *Teams) FindTeamByName(ctx context.Context, name string) (domain.Team, error) {
	return s.findTeam(ctx, name)
}

func (s *Teams) findTeam(ctx context.Context, name string) (domain.Team, error) {
	doc, err := mongox.FindOne[teamDoc](ctx, s.coll, bson.M{"_id": name})
	if errors.Is(err, mongox.ErrNotFound) {
		return domain.Team{}, apperr.New(apperr.TeamNotFound, "Team '%s' was not found.", name)
	}
	if err != nil {
		return domain.Team{}, fmt.Errorf("find team %s: %w", name, err)
	}
	return domain.Team{ID: doc.ID, Name: doc.Name, DisplayName: doc.DisplayName, CreationDate: doc.CreationDate.UTC()}, nil
}

// ListTeams returns every known team, by name.
func (s *Teams) ListTeams(ctx context.Context) ([]domain.Team, error) {
	cur, err := s.coll.Find(ctx, bson.M{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("list teams: %w", err)
	}
	var docs []teamDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("list teams: %w", err)
	}
	out := make([]domain.Team, len(docs))
	for i, d := range docs {
		out[i] = domain.Team{ID: d.ID, Name: d.Name, DisplayName: d.DisplayName, CreationDate: d.CreationDate.UTC()}
	}
	return out, nil
}

// ReserveWorkflow counts one more workflow of t unless it has limit already. The check and
// the increment are one conditional update, so racing creates never pass the limit.
func (s *Teams) ReserveWorkflow(ctx context.Context, t domain.Team, limit int) (bool, error) {
	res, err := s.coll.UpdateOne(ctx,
		bson.M{"_id": t.Name, "teamId": t.ID, "$or": bson.A{
			bson.M{"workflowCount": bson.M{"$lt": limit}},
			bson.M{"workflowCount": bson.M{"$exists": false}}, // a record older than the counter
		}},
		bson.M{"$inc": bson.M{"workflowCount": 1}})
	if err != nil {
		return false, fmt.Errorf("reserve a workflow of team %s: %w", t.Name, err)
	}
	if res.MatchedCount == 1 {
		return true, nil
	}
	// No match: the limit is reached, or the team went away meanwhile.
	if _, err := s.FindTeamByName(ctx, t.Name); err != nil {
		return false, err
	}
	return false, nil
}

// ReleaseWorkflow counts one workflow of t less, never below zero.
func (s *Teams) ReleaseWorkflow(ctx context.Context, t domain.Team) error {
	_, err := s.coll.UpdateOne(ctx,
		bson.M{"_id": t.Name, "teamId": t.ID, "workflowCount": bson.M{"$gt": 0}},
		bson.M{"$inc": bson.M{"workflowCount": -1}})
	if err != nil {
		return fmt.Errorf("release a workflow of team %s: %w", t.Name, err)
	}
	return nil
}
