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
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// UsersCollection is the collection name of users.
const UsersCollection = "users"

// userDoc is a user as stored. Emails are stored lower-cased under a unique index.
type userDoc struct {
	ID            bson.ObjectID     `bson:"_id"`
	Email         string            `bson:"email"`
	Name          string            `bson:"name"`
	DisplayName   string            `bson:"displayName,omitempty"`
	Type          string            `bson:"type"`
	Status        string            `bson:"status"`
	Labels        map[string]string `bson:"labels,omitempty"`
	CreationDate  time.Time         `bson:"creationDate"`
	LastLoginDate *time.Time        `bson:"lastLoginDate,omitempty"`
	Version       int64             `bson:"version"`
}

func toUserDoc(u domain.User) (userDoc, error) {
	id, err := bson.ObjectIDFromHex(u.ID)
	if err != nil {
		return userDoc{}, fmt.Errorf("user id %q: %w", u.ID, err)
	}
	return userDoc{
		ID: id, Email: u.Email, Name: u.Name, DisplayName: u.DisplayName, Type: string(u.Type),
		Status: string(u.Status), Labels: mongox.FieldNames(u.Labels), CreationDate: u.CreationDate, LastLoginDate: u.LastLoginDate,
		Version: u.Version,
	}, nil
}

func (d userDoc) user() domain.User {
	u := domain.User{
		ID: d.ID.Hex(), Email: d.Email, Name: d.Name, DisplayName: d.DisplayName, Type: domain.UserType(d.Type),
		Status: domain.UserStatus(d.Status), Labels: mongox.FieldKeys(d.Labels), CreationDate: d.CreationDate.UTC(), Version: d.Version,
	}
	if d.LastLoginDate != nil {
		t := d.LastLoginDate.UTC()
		u.LastLoginDate = &t
	}
	return u
}

// Users is the Mongo UserStore.
type Users struct {
	coll *mongo.Collection
}

// NewUsers returns the store over db, creating its indexes.
func NewUsers(ctx context.Context, db *mongo.Database) (*Users, error) {
	coll := db.Collection(UsersCollection)
	err := mongox.EnsureIndexes(ctx, coll,
		mongo.IndexModel{Keys: bson.D{{Key: "email", Value: 1}}, Options: options.Index().SetUnique(true)},
		mongo.IndexModel{Keys: bson.D{{Key: "status", Value: 1}, {Key: "name", Value: 1}}},
	)
	if err != nil {
		return nil, fmt.Errorf("user indexes: %w", err)
	}
	return &Users{coll: coll}, nil
}

// CreateUser stores a new user; a taken email fails with an error matching
// domain.ErrUserEmailTaken.
func (s *Users) CreateUser(ctx context.Context, u domain.User) error {
	doc, err := toUserDoc(u)
	if err != nil {
		return err
	}
	if _, err := s.coll.InsertOne(ctx, doc); err != nil {
		if mongox.IsDuplicateKey(err) {
			return domain.UserEmailTaken(u.Email)
		}
		return fmt.Errorf("insert user %s: %w", u.Email, err)
	}
	return nil
}

// userObjectID parses a user id; ids that are not ObjectIDs name no user.
func userObjectID(id string) (bson.ObjectID, error) {
	oid, err := bson.ObjectIDFromHex(id)
	if err != nil {
		return bson.ObjectID{}, domain.UserNotFound(id)
	}
	return oid, nil
}

// FindUserByID returns the user with id, deleted ones included.
func (s *Users) FindUserByID(ctx context.Context, id string) (domain.User, error) {
	oid, err := userObjectID(id)
	if err != nil {
		return domain.User{}, err
	}
	return s.findUser(ctx, bson.M{"_id": oid}, id)
}

// FindUserByEmail returns the user with email (compared lower-cased).
func (s *Users) FindUserByEmail(ctx context.Context, email string) (domain.User, error) {
	e, err := domain.NormalizeEmail(email)
	if err != nil {
		return domain.User{}, domain.UserNotFound(email)
	}
	return s.findUser(ctx, bson.M{"email": e}, email)
}

func (s *Users) findUser(ctx context.Context, filter bson.M, ref string) (domain.User, error) {
	doc, err := mongox.FindOne[userDoc](ctx, s.coll, filter)
	if errors.Is(err, mongox.ErrNotFound) {
		return domain.User{}, domain.UserNotFound(ref)
	}
	if err != nil {
		return domain.User{}, fmt.Errorf("find user %s: %w", ref, err)
	}
	return doc.user(), nil
}

// FindUsersByIDs returns the users with these ids that exist, in no particular order.
func (s *Users) FindUsersByIDs(ctx context.Context, ids []string) ([]domain.User, error) {
	oids := userObjectIDs(ids)
	if len(oids) == 0 {
		return nil, nil
	}
	cur, err := s.coll.Find(ctx, bson.M{"_id": bson.M{"$in": oids}})
	if err != nil {
		return nil, fmt.Errorf("find users: %w", err)
	}
	var docs []userDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read users: %w", err)
	}
	users := make([]domain.User, len(docs))
	for i, d := range docs {
		users[i] = d.user()
	}
	return users, nil
}

// userObjectIDs parses ids, dropping those that are not ObjectIDs: they match no user.
func userObjectIDs(ids []string) []bson.ObjectID {
	out := []bson.ObjectID{} // never nil: {$in: null} is an error, {$in: []} matches nothing
	for _, id := range ids {
		if oid, err := bson.ObjectIDFromHex(id); err == nil {
			out = append(out, oid)
		}
	}
	return out
}

// UpdateUser applies fn and writes the result conditionally on the version read.
func (s *Users) UpdateUser(ctx context.Context, id string, fn func(*domain.User) error) (domain.User, error) {
	oid, err := userObjectID(id)
	if err != nil {
		return domain.User{}, err
	}
	for range maxAttempts {
		u, err := s.FindUserByID(ctx, id)
		if err != nil {
			return domain.User{}, err
		}
		if err := fn(&u); err != nil {
			return domain.User{}, err
		}
		set := bson.M{
			"email": u.Email, "name": u.Name, "displayName": u.DisplayName, "type": string(u.Type),
			"status": string(u.Status), "labels": mongox.FieldNames(u.Labels), "lastLoginDate": u.LastLoginDate,
		}
		err = mongox.UpdateVersioned(ctx, s.coll, bson.M{"_id": oid}, u.Version, bson.M{"$set": set})
		switch {
		case errors.Is(err, mongox.ErrConflict):
			continue
		case mongox.IsDuplicateKey(err):
			return domain.User{}, domain.UserEmailTaken(u.Email)
		case err != nil:
			return domain.User{}, fmt.Errorf("update user %s: %w", id, err)
		}
		u.Version++
		return u, nil
	}
	return domain.User{}, apperr.New(apperr.ConcurrentModification, "User '%s' is being changed by others; try again.", id)
}

var userSortKeys = map[string]string{"name": "name", "creationDate": "creationDate", "status": "status"}

// FindUsers returns one page of users matching f, and how many match in all.
func (s *Users) FindUsers(ctx context.Context, f domain.UserFilter, p page.Request) ([]domain.User, int64, error) {
	filter := bson.M{}
	if f.IDs != nil {
		filter["_id"] = bson.M{"$in": userObjectIDs(f.IDs)}
	}
	if len(f.Statuses) > 0 {
		filter["status"] = bson.M{"$in": f.Statuses}
	}
	for k, v := range f.Labels {
		filter["labels."+mongox.FieldName(k)] = v
	}
	sortKey, ok := userSortKeys[p.Sort]
	if !ok {
		sortKey = "name"
	}
	docs, total, err := mongox.FindPage[userDoc](ctx, s.coll, filter,
		mongox.Sort{Field: sortKey, Tiebreak: "_id", Desc: p.Desc}, p.Offset(), int64(p.Size))
	if err != nil {
		return nil, 0, err
	}
	users := make([]domain.User, len(docs))
	for i, d := range docs {
		users[i] = d.user()
	}
	return users, total, nil
}
