// Package mongostore keeps identity's records in its own MongoDB database and turns driver
// errors into domain errors.
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

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/outbox"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// TeamsCollection is the collection name of teams.
const TeamsCollection = "teams"

// teamDoc is a team as stored. `key` holds the name while the team lives and is unique; a
// deleted team keeps its record as a tombstone, with key `~deleted/<id>`, until its
// `team.deleted` event is published, so the name is free again at once.
type teamDoc struct {
	ID           bson.ObjectID     `bson:"_id"`
	Key          string            `bson:"key"`
	Name         string            `bson:"name"`
	DisplayName  string            `bson:"displayName"`
	Status       string            `bson:"status"`
	Labels       map[string]string `bson:"labels,omitempty"`
	ExternalRef  string            `bson:"externalRef,omitempty"`
	CreationDate time.Time         `bson:"creationDate"`
	// Members hold user ids; `members.userId` finds a user's teams.
	Members        []memberDoc        `bson:"members,omitempty"`
	ApproverGroups []approverGroupDoc `bson:"approverGroups,omitempty"`
	Parameters     []teamParamDoc     `bson:"parameters,omitempty"`
	Quotas         quotaOverridesDoc  `bson:"quotas"`
	Version        int64              `bson:"version"`
	Deleted        bool               `bson:"deleted"`
	Outbox         []outbox.Entry     `bson:"outbox"`
}

type memberDoc struct {
	UserID string `bson:"userId"`
	Role   string `bson:"role"`
}

type approverGroupDoc struct {
	ID        string   `bson:"id"`
	Name      string   `bson:"name"`
	Approvers []string `bson:"approvers"`
}

// teamParamDoc keeps default and value as JSON text: decoded into an interface, the driver
// would turn objects into ordered key lists and lose the shape clients sent.
type teamParamDoc struct {
	Name           string           `bson:"name"`
	Label          string           `bson:"label,omitempty"`
	Description    string           `bson:"description,omitempty"`
	Type           string           `bson:"type,omitempty"`
	Default        string           `bson:"default,omitempty"`
	Value          string           `bson:"value,omitempty"`
	Required       bool             `bson:"required,omitempty"`
	Placeholder    string           `bson:"placeholder,omitempty"`
	HelperText     string           `bson:"helperText,omitempty"`
	Options        []paramOptionDoc `bson:"options,omitempty"`
	MinValueLength *int             `bson:"minValueLength,omitempty"`
	MaxValueLength *int             `bson:"maxValueLength,omitempty"`
	ReadOnly       bool             `bson:"readOnly,omitempty"`
	HiddenValue    bool             `bson:"hiddenValue,omitempty"`
}

type paramOptionDoc struct {
	Key   string `bson:"key"`
	Value string `bson:"value"`
}

type quotaOverridesDoc struct {
	MaxWorkflowCount       *int `bson:"maxWorkflowCount,omitempty"`
	MaxWorkflowRunMonthly  *int `bson:"maxWorkflowRunMonthly,omitempty"`
	MaxWorkflowStorage     *int `bson:"maxWorkflowStorage,omitempty"`
	MaxWorkflowRunStorage  *int `bson:"maxWorkflowRunStorage,omitempty"`
	MaxWorkflowRunDuration *int `bson:"maxWorkflowRunDuration,omitempty"`
	MaxConcurrentRuns      *int `bson:"maxConcurrentRuns,omitempty"`
}

func toMemberDocs(t domain.Team) []memberDoc {
	out := make([]memberDoc, len(t.Members))
	for i, m := range t.Members {
		out[i] = memberDoc{UserID: m.UserID, Role: m.Role}
	}
	return out
}

func toApproverGroupDocs(t domain.Team) []approverGroupDoc {
	out := make([]approverGroupDoc, len(t.ApproverGroups))
	for i, g := range t.ApproverGroups {
		approvers := g.Approvers
		if approvers == nil {
			approvers = []string{}
		}
		out[i] = approverGroupDoc{ID: g.ID, Name: g.Name, Approvers: approvers}
	}
	return out
}

func toTeamParamDocs(t domain.Team) []teamParamDoc {
	out := make([]teamParamDoc, len(t.Parameters))
	for i, p := range t.Parameters {
		opts := make([]paramOptionDoc, len(p.Options))
		for j, o := range p.Options {
			opts[j] = paramOptionDoc(o)
		}
		out[i] = teamParamDoc{
			Name: p.Name, Label: p.Label, Description: p.Description, Type: p.Type,
			Default: string(p.Default), Value: string(p.Value), Required: p.Required,
			Placeholder: p.Placeholder, HelperText: p.HelperText, Options: opts,
			MinValueLength: p.MinValueLength, MaxValueLength: p.MaxValueLength,
			ReadOnly: p.ReadOnly, HiddenValue: p.HiddenValue,
		}
	}
	return out
}

func (d teamParamDoc) param() domain.TeamParam {
	var opts []domain.TeamParamOption
	for _, o := range d.Options {
		opts = append(opts, domain.TeamParamOption(o))
	}
	raw := func(s string) json.RawMessage {
		if s == "" {
			return nil
		}
		return json.RawMessage(s)
	}
	return domain.TeamParam{
		Name: d.Name, Label: d.Label, Description: d.Description, Type: d.Type,
		Default: raw(d.Default), Value: raw(d.Value), Required: d.Required,
		Placeholder: d.Placeholder, HelperText: d.HelperText, Options: opts,
		MinValueLength: d.MinValueLength, MaxValueLength: d.MaxValueLength,
		ReadOnly: d.ReadOnly, HiddenValue: d.HiddenValue,
	}
}

func toDoc(t domain.Team) (teamDoc, error) {
	id, err := bson.ObjectIDFromHex(t.ID)
	if err != nil {
		return teamDoc{}, fmt.Errorf("team id %q: %w", t.ID, err)
	}
	return teamDoc{
		ID: id, Key: t.Name, Name: t.Name, DisplayName: t.DisplayName, Status: string(t.Status),
		Labels: mongox.FieldNames(t.Labels), ExternalRef: t.ExternalRef, CreationDate: t.CreationDate, Version: t.Version,
		Members: toMemberDocs(t), ApproverGroups: toApproverGroupDocs(t), Parameters: toTeamParamDocs(t),
		Quotas: quotaOverridesDoc(t.QuotaOverrides), Outbox: []outbox.Entry{},
	}, nil
}

func (d teamDoc) team() domain.Team {
	t := domain.Team{
		ID: d.ID.Hex(), Name: d.Name, DisplayName: d.DisplayName, Status: domain.TeamStatus(d.Status),
		Labels: mongox.FieldKeys(d.Labels), ExternalRef: d.ExternalRef, CreationDate: d.CreationDate.UTC(), Version: d.Version,
		QuotaOverrides: domain.TeamQuotaOverrides(d.Quotas),
	}
	for _, m := range d.Members {
		t.Members = append(t.Members, domain.Member{UserID: m.UserID, Role: m.Role})
	}
	for _, g := range d.ApproverGroups {
		t.ApproverGroups = append(t.ApproverGroups, domain.ApproverGroup{ID: g.ID, Name: g.Name, Approvers: g.Approvers})
	}
	for _, p := range d.Parameters {
		t.Parameters = append(t.Parameters, p.param())
	}
	return t
}

// Teams is the Mongo TeamStore.
type Teams struct {
	coll *mongo.Collection
}

// NewTeams returns the store over db, creating its indexes.
func NewTeams(ctx context.Context, db *mongo.Database) (*Teams, error) {
	coll := db.Collection(TeamsCollection)
	err := mongox.EnsureIndexes(ctx, coll,
		mongo.IndexModel{Keys: bson.D{{Key: "key", Value: 1}}, Options: options.Index().SetUnique(true)},
		mongo.IndexModel{Keys: bson.D{{Key: "deleted", Value: 1}, {Key: "name", Value: 1}}},
		mongo.IndexModel{Keys: bson.D{{Key: "deleted", Value: 1}, {Key: "creationDate", Value: 1}}},
		mongo.IndexModel{Keys: bson.D{{Key: "members.userId", Value: 1}}},
	)
	if err != nil {
		return nil, fmt.Errorf("team indexes: %w", err)
	}
	return &Teams{coll: coll}, nil
}

// Collection is the teams collection, for the outbox relay.
func (s *Teams) Collection() *mongo.Collection { return s.coll }

// TombstoneFilter selects deleted teams, which the relay purges once their events left.
var TombstoneFilter = bson.M{"deleted": true}

// CreateTeam stores t with the events it owes.
func (s *Teams) CreateTeam(ctx context.Context, t domain.Team, owed []outbox.Entry) error {
	doc, err := toDoc(t)
	if err != nil {
		return err
	}
	if owed != nil {
		doc.Outbox = owed // nil would store null, which a later $push refuses
	}
	if _, err := s.coll.InsertOne(ctx, doc); err != nil {
		if mongox.IsDuplicateKey(err) {
			return domain.TeamNameTaken(t.Name)
		}
		return fmt.Errorf("insert team %s: %w", t.Name, err)
	}
	return nil
}

// FindTeamByName returns the live team called name.
func (s *Teams) FindTeamByName(ctx context.Context, name string) (domain.Team, error) {
	doc, err := mongox.FindOne[teamDoc](ctx, s.coll, bson.M{"key": name})
	if errors.Is(err, mongox.ErrNotFound) {
		return domain.Team{}, domain.TeamNotFound(name)
	}
	if err != nil {
		return domain.Team{}, fmt.Errorf("find team %s: %w", name, err)
	}
	return doc.team(), nil
}

// maxAttempts bounds retries of an update that lost a race with another writer.
const maxAttempts = 5

// UpdateTeam applies fn and writes the result conditionally on the version read.
func (s *Teams) UpdateTeam(ctx context.Context, name string, fn func(*domain.Team) error) (domain.Team, error) {
	for range maxAttempts {
		t, err := s.FindTeamByName(ctx, name)
		if err != nil {
			return domain.Team{}, err
		}
		if err := fn(&t); err != nil {
			return domain.Team{}, err
		}
		set := bson.M{
			"displayName": t.DisplayName, "status": string(t.Status), "labels": mongox.FieldNames(t.Labels), "externalRef": t.ExternalRef,
			"members": toMemberDocs(t), "approverGroups": toApproverGroupDocs(t), "parameters": toTeamParamDocs(t),
			"quotas": quotaOverridesDoc(t.QuotaOverrides),
		}
		err = mongox.UpdateVersioned(ctx, s.coll, bson.M{"key": name}, t.Version, bson.M{"$set": set})
		if errors.Is(err, mongox.ErrConflict) {
			continue
		}
		if err != nil {
			return domain.Team{}, fmt.Errorf("update team %s: %w", name, err)
		}
		t.Version++
		return t, nil
	}
	return domain.Team{}, apperr.New(apperr.ConcurrentModification, "Team '%s' is being changed by others; try again.", name)
}

// DeleteTeam turns the team into a tombstone carrying the events owed for its removal.
func (s *Teams) DeleteTeam(ctx context.Context, name string, owed func(domain.Team) ([]outbox.Entry, error)) error {
	for range maxAttempts {
		t, err := s.FindTeamByName(ctx, name)
		if err != nil {
			return err
		}
		entries, err := owed(t)
		if err != nil {
			return err
		}
		update := bson.M{
			"$set":  bson.M{"deleted": true, "key": "~deleted/" + t.ID},
			"$push": bson.M{outbox.Field: bson.M{"$each": entries}},
		}
		err = mongox.UpdateVersioned(ctx, s.coll, bson.M{"key": name}, t.Version, update)
		if errors.Is(err, mongox.ErrConflict) {
			continue
		}
		if err != nil {
			return fmt.Errorf("delete team %s: %w", name, err)
		}
		return nil
	}
	return apperr.New(apperr.ConcurrentModification, "Team '%s' is being changed by others; try again.", name)
}

var teamSortKeys = map[string]string{"name": "name", "creationDate": "creationDate", "status": "status"}

// FindTeams returns one page of live teams matching f, and how many match in all.
func (s *Teams) FindTeams(ctx context.Context, f domain.TeamFilter, p page.Request) ([]domain.Team, int64, error) {
	filter := bson.M{"deleted": false}
	if len(f.Names) > 0 {
		filter["key"] = bson.M{"$in": f.Names}
	}
	if len(f.Statuses) > 0 {
		filter["status"] = bson.M{"$in": f.Statuses}
	}
	for k, v := range f.Labels {
		filter["labels."+mongox.FieldName(k)] = v
	}
	if f.MemberID != "" {
		// FerretDB v1 answers $elemMatch with nothing; a dotted path into the array works on both.
		filter["members.userId"] = f.MemberID
	}
	sortKey, ok := teamSortKeys[p.Sort]
	if !ok {
		sortKey = "name"
	}
	docs, total, err := mongox.FindPage[teamDoc](ctx, s.coll, filter,
		mongox.Sort{Field: sortKey, Tiebreak: "_id", Desc: p.Desc}, p.Offset(), int64(p.Size))
	if err != nil {
		return nil, 0, err
	}
	teams := make([]domain.Team, len(docs))
	for i, d := range docs {
		teams[i] = d.team()
	}
	return teams, total, nil
}

// TeamNameTaken reports whether a live team is called name.
func (s *Teams) TeamNameTaken(ctx context.Context, name string) (bool, error) {
	n, err := s.coll.CountDocuments(ctx, bson.M{"key": name}, options.Count().SetLimit(1))
	if err != nil {
		return false, fmt.Errorf("check team name %s: %w", name, err)
	}
	return n > 0, nil
}

// FindTeamsByMember returns every live team userID belongs to, by name.
func (s *Teams) FindTeamsByMember(ctx context.Context, userID string) ([]domain.Team, error) {
	cur, err := s.coll.Find(ctx, bson.M{"deleted": false, "members.userId": userID},
		options.Find().SetSort(bson.D{{Key: "name", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("find teams of user %s: %w", userID, err)
	}
	var docs []teamDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read teams of user %s: %w", userID, err)
	}
	teams := make([]domain.Team, len(docs))
	for i, d := range docs {
		teams[i] = d.team()
	}
	return teams, nil
}
