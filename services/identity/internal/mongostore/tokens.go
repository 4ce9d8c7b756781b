package mongostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// TokensCollection is the collection name of tokens.
const TokensCollection = "tokens"

// tokenDoc is a token as stored. Its _id is the hex SHA-256 of the secret: authentication
// is then a lookup by _id, the one lookup FerretDB answers from an index (see libs/mongox).
// The public id is another field; finding a token by it is rarer (revoking).
type tokenDoc struct {
	Hash           string     `bson:"_id"`
	ID             string     `bson:"tokenId"`
	Type           string     `bson:"type"`
	Name           string     `bson:"name"`
	Description    string     `bson:"description,omitempty"`
	Principal      string     `bson:"principal"`
	Team           string     `bson:"team,omitempty"`
	TeamID         string     `bson:"teamId,omitempty"`
	Workflow       string     `bson:"workflow,omitempty"`
	UserID         string     `bson:"userId,omitempty"`
	Permissions    []string   `bson:"permissions"`
	CreationDate   time.Time  `bson:"creationDate"`
	ExpirationDate *time.Time `bson:"expirationDate,omitempty"`
	RevokedDate    *time.Time `bson:"revokedDate,omitempty"`
	CreatedBy      string     `bson:"createdBy"`
	Creator        string     `bson:"creator"`
	CreatorUserID  string     `bson:"creatorUserId,omitempty"`
	Ancestors      []string   `bson:"ancestors,omitempty"`
	LastUsed       *time.Time `bson:"lastUsed,omitempty"`
}

func tokenToDoc(t domain.Token) tokenDoc {
	perms := t.Permissions
	if perms == nil {
		perms = []string{}
	}
	return tokenDoc{
		Hash: t.Hash, ID: t.ID, Type: string(t.Type), Name: t.Name, Description: t.Description,
		Principal: t.Principal, Team: t.Team, TeamID: t.TeamID, Workflow: t.Workflow, UserID: t.UserID,
		Permissions: perms, CreationDate: t.CreationDate, ExpirationDate: t.ExpirationDate,
		RevokedDate: t.RevokedDate, CreatedBy: t.CreatedBy, Creator: t.Creator, CreatorUserID: t.CreatorUserID,
		Ancestors: t.Ancestors, LastUsed: t.LastUsed,
	}
}

func (d tokenDoc) token() domain.Token {
	utc := func(p *time.Time) *time.Time {
		if p == nil {
			return nil
		}
		u := p.UTC()
		return &u
	}
	var perms []string
	if len(d.Permissions) > 0 {
		perms = d.Permissions
	}
	return domain.Token{
		ID: d.ID, Hash: d.Hash, Type: domain.TokenType(d.Type), Name: d.Name, Description: d.Description,
		Principal: d.Principal, Team: d.Team, TeamID: d.TeamID, Workflow: d.Workflow, UserID: d.UserID,
		Permissions: perms, CreationDate: d.CreationDate.UTC(), ExpirationDate: utc(d.ExpirationDate),
		RevokedDate: utc(d.RevokedDate), CreatedBy: d.CreatedBy, Creator: d.Creator, CreatorUserID: d.CreatorUserID,
		Ancestors: d.Ancestors, LastUsed: utc(d.LastUsed),
	}
}

// Tokens is the Mongo TokenStore.
type Tokens struct {
	coll *mongo.Collection
}

// NewTokens returns the store over db, creating its indexes.
func NewTokens(ctx context.Context, db *mongo.Database) (*Tokens, error) {
	coll := db.Collection(TokensCollection)
	err := mongox.EnsureIndexes(ctx, coll,
		mongo.IndexModel{Keys: bson.D{{Key: "tokenId", Value: 1}}, Options: options.Index().SetUnique(true)},
		// The searches' visibility branches, on MongoDB (FerretDB scans either way).
		mongo.IndexModel{Keys: bson.D{{Key: "creator", Value: 1}, {Key: "creationDate", Value: 1}}},
		mongo.IndexModel{Keys: bson.D{{Key: "team", Value: 1}, {Key: "creationDate", Value: 1}}},
		mongo.IndexModel{Keys: bson.D{{Key: "userId", Value: 1}, {Key: "creationDate", Value: 1}}},
		// Revoking a token revokes the tokens made with it, and deleting a user the tokens
		// they made.
		mongo.IndexModel{Keys: bson.D{{Key: "ancestors", Value: 1}}},
		mongo.IndexModel{Keys: bson.D{{Key: "creatorUserId", Value: 1}}},
	)
	if err != nil {
		return nil, fmt.Errorf("token indexes: %w", err)
	}
	return &Tokens{coll: coll}, nil
}

// CreateToken stores t.
func (s *Tokens) CreateToken(ctx context.Context, t domain.Token) error {
	if _, err := s.coll.InsertOne(ctx, tokenToDoc(t)); err != nil {
		return fmt.Errorf("insert token %s: %w", t.ID, err)
	}
	return nil
}

// FindTokenByHash returns the token whose secret hashes to hash.
func (s *Tokens) FindTokenByHash(ctx context.Context, hash string) (domain.Token, error) {
	doc, err := mongox.FindOne[tokenDoc](ctx, s.coll, bson.M{"_id": hash})
	if errors.Is(err, mongox.ErrNotFound) {
		return domain.Token{}, domain.ErrTokenNotFound
	}
	if err != nil {
		// The hash identifies a credential: it stays out of errors, which get logged.
		return domain.Token{}, fmt.Errorf("find token by hash: %w", err)
	}
	return doc.token(), nil
}

// FindTokenByID returns the token with public id.
func (s *Tokens) FindTokenByID(ctx context.Context, id string) (domain.Token, error) {
	doc, err := mongox.FindOne[tokenDoc](ctx, s.coll, bson.M{"tokenId": id})
	if errors.Is(err, mongox.ErrNotFound) {
		return domain.Token{}, domain.TokenNotFound(id)
	}
	if err != nil {
		return domain.Token{}, fmt.Errorf("find token %s: %w", id, err)
	}
	return doc.token(), nil
}

var tokenSortKeys = map[string]string{"creationDate": "creationDate", "name": "name"}

// FindTokens returns one page of the tokens f selects, and how many it selects in all.
func (s *Tokens) FindTokens(ctx context.Context, f domain.TokenFilter, p page.Request) ([]domain.Token, int64, error) {
	filter := bson.M{}
	if a := f.Audience; !a.All {
		var or bson.A
		if a.Creator != "" {
			or = append(or, bson.M{"creator": a.Creator})
		}
		if a.UserID != "" {
			or = append(or, bson.M{"userId": a.UserID})
		}
		if len(a.Teams) > 0 {
			or = append(or, bson.M{"team": bson.M{"$in": a.Teams}})
		}
		if len(or) == 0 {
			return nil, 0, nil
		}
		filter["$or"] = or
	}
	if len(f.Types) > 0 {
		filter["type"] = bson.M{"$in": f.Types}
	}
	if len(f.Principals) > 0 {
		filter["principal"] = bson.M{"$in": f.Principals}
	}
	if f.From != nil || f.To != nil {
		r := bson.M{}
		if f.From != nil {
			r["$gte"] = *f.From
		}
		if f.To != nil {
			r["$lte"] = *f.To
		}
		filter["creationDate"] = r
	}
	sortKey, ok := tokenSortKeys[p.Sort]
	if !ok {
		sortKey = "creationDate"
	}
	docs, total, err := mongox.FindPage[tokenDoc](ctx, s.coll, filter,
		mongox.Sort{Field: sortKey, Tiebreak: "tokenId", Desc: p.Desc}, p.Offset(), int64(p.Size))
	if err != nil {
		return nil, 0, err
	}
	tokens := make([]domain.Token, len(docs))
	for i, d := range docs {
		tokens[i] = d.token()
	}
	return tokens, total, nil
}

// FindTokensByHashes returns those of the tokens with these hashes that exist. It asks
// for each by _id: FerretDB answers that from its primary key, and an `$in` with a scan of
// the collection; chains of tokens are short.
func (s *Tokens) FindTokensByHashes(ctx context.Context, hashes []string) ([]domain.Token, error) {
	out := make([]domain.Token, 0, len(hashes))
	for _, h := range hashes {
		t, err := s.FindTokenByHash(ctx, h)
		if errors.Is(err, domain.ErrTokenNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// RevokeToken marks the token with id revoked at at unless it already is, then every live
// token made with it, however far removed, and returns the token.
func (s *Tokens) RevokeToken(ctx context.Context, id string, at time.Time) (domain.Token, error) {
	// The filter keeps the first revocation's date when two race.
	_, err := s.coll.UpdateOne(ctx,
		bson.M{"tokenId": id, "revokedDate": bson.M{"$exists": false}},
		bson.M{"$set": bson.M{"revokedDate": at}})
	if err != nil {
		return domain.Token{}, fmt.Errorf("revoke token %s: %w", id, err)
	}
	t, err := s.FindTokenByID(ctx, id)
	if err != nil {
		return domain.Token{}, err
	}
	// Descendants list every ancestor, so one write reaches them all. Authentication checks
	// the ancestors too, so a failure here cannot leave a descendant working.
	_, err = s.coll.UpdateMany(ctx,
		bson.M{"ancestors": t.Hash, "revokedDate": bson.M{"$exists": false}},
		bson.M{"$set": bson.M{"revokedDate": at}})
	if err != nil {
		return domain.Token{}, fmt.Errorf("revoke tokens made with token %s: %w", id, err)
	}
	return t, nil
}

// RevokeUserTokens marks every live token of the user revoked at at: those acting as the
// user and those the user made, directly or through other tokens.
func (s *Tokens) RevokeUserTokens(ctx context.Context, userID string, at time.Time) error {
	_, err := s.coll.UpdateMany(ctx,
		bson.M{"$or": bson.A{
			bson.M{"userId": userID},
			bson.M{"creatorUserId": userID},
			bson.M{"creator": "user:" + userID},
		}, "revokedDate": bson.M{"$exists": false}},
		bson.M{"$set": bson.M{"revokedDate": at}})
	if err != nil {
		return fmt.Errorf("revoke tokens of user %s: %w", userID, err)
	}
	return nil
}

// TouchToken records that the token whose secret hashes to hash was used at at.
func (s *Tokens) TouchToken(ctx context.Context, hash string, at time.Time) error {
	if _, err := s.coll.UpdateOne(ctx, bson.M{"_id": hash}, bson.M{"$set": bson.M{"lastUsed": at}}); err != nil {
		return fmt.Errorf("touch token: %w", err)
	}
	return nil
}

// TokenTeams answers the token use cases' questions about teams from the teams collection.
type TokenTeams struct {
	coll *mongo.Collection
}

// NewTokenTeams returns the team lookups over db's teams collection.
func NewTokenTeams(db *mongo.Database) *TokenTeams {
	return &TokenTeams{coll: db.Collection(TeamsCollection)}
}

// teamRef is the part of a team record the lookups need.
type teamRef struct {
	ID  bson.ObjectID `bson:"_id"`
	Key string        `bson:"key"`
}

var teamRefProjection = options.FindOne().SetProjection(bson.M{"_id": 1, "key": 1})

// TeamID returns the record id of the live team called name.
func (s *TokenTeams) TeamID(ctx context.Context, name string) (string, error) {
	ref, err := mongox.FindOne[teamRef](ctx, s.coll, bson.M{"key": name}, teamRefProjection)
	if errors.Is(err, mongox.ErrNotFound) {
		return "", domain.TeamNotFound(name)
	}
	if err != nil {
		return "", fmt.Errorf("find team %s: %w", name, err)
	}
	return ref.ID.Hex(), nil
}

// TeamLive reports whether the team with record id is live and still called name: a deleted
// team's record is a tombstone whose key is no longer its name, and is purged later.
func (s *TokenTeams) TeamLive(ctx context.Context, id, name string) (bool, error) {
	oid, err := bson.ObjectIDFromHex(id)
	if err != nil {
		return false, nil
	}
	ref, err := mongox.FindOne[teamRef](ctx, s.coll, bson.M{"_id": oid}, teamRefProjection)
	if errors.Is(err, mongox.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("find team %s: %w", id, err)
	}
	return ref.Key == name, nil
}
