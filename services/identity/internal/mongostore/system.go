package mongostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// SystemCollection holds the instance-wide singletons, each a document with a fixed _id:
// the settings and the activation state. Reads and writes name the _id, the one lookup
// FerretDB answers without a scan.
const SystemCollection = "system"

const (
	settingsID   = "settings"
	activationID = "activation"
)

type optionDoc struct {
	Key   string `bson:"key"`
	Value string `bson:"value"`
}

func optionDocs(opts []domain.Option) []optionDoc {
	out := make([]optionDoc, len(opts))
	for i, o := range opts {
		out[i] = optionDoc(o)
	}
	return out
}

func domainOptions(docs []optionDoc) []domain.Option {
	if len(docs) == 0 {
		return nil
	}
	out := make([]domain.Option, len(docs))
	for i, o := range docs {
		out[i] = domain.Option(o)
	}
	return out
}

// settingsDoc keeps every setting in one document, so a change to several is one write.
// Secured values are stored sealed.
type settingsDoc struct {
	ID       string       `bson:"_id"`
	Settings []settingDoc `bson:"settings"`
	Version  int64        `bson:"version"`
}

type settingDoc struct {
	Key         string      `bson:"key"`
	Name        string      `bson:"name"`
	Description string      `bson:"description"`
	Type        string      `bson:"type"`
	Config      []configDoc `bson:"config"`
}

type configDoc struct {
	Key          string      `bson:"key"`
	Label        string      `bson:"label"`
	Description  string      `bson:"description"`
	Type         string      `bson:"type"`
	Value        string      `bson:"value"`
	DefaultValue string      `bson:"defaultValue"`
	Options      []optionDoc `bson:"options"`
	Required     bool        `bson:"required"`
}

func (d *settingsDoc) stamp(id string, version int64) { d.ID, d.Version = id, version }
func (d *settingsDoc) current() int64                 { return d.Version }

func (d settingsDoc) settings() domain.Settings {
	st := domain.Settings{Items: make([]domain.Setting, len(d.Settings)), Version: d.Version}
	for i, s := range d.Settings {
		cfg := make([]domain.SettingConfig, len(s.Config))
		for j, c := range s.Config {
			cfg[j] = domain.SettingConfig{
				Key: c.Key, Label: c.Label, Description: c.Description, Type: domain.ConfigType(c.Type),
				Value: c.Value, DefaultValue: c.DefaultValue, Options: domainOptions(c.Options), Required: c.Required,
			}
		}
		st.Items[i] = domain.Setting{Key: s.Key, Name: s.Name, Description: s.Description, Type: s.Type, Config: cfg}
	}
	return st
}

func settingDocs(st domain.Settings) []settingDoc {
	out := make([]settingDoc, len(st.Items))
	for i, s := range st.Items {
		cfg := make([]configDoc, len(s.Config))
		for j, c := range s.Config {
			cfg[j] = configDoc{
				Key: c.Key, Label: c.Label, Description: c.Description, Type: string(c.Type),
				Value: c.Value, DefaultValue: c.DefaultValue, Options: optionDocs(c.Options), Required: c.Required,
			}
		}
		out[i] = settingDoc{Key: s.Key, Name: s.Name, Description: s.Description, Type: s.Type, Config: cfg}
	}
	return out
}

// activationDoc is the activation state. codeHash is written even when empty, so a
// spent code is cleared by the same $set that activates.
type activationDoc struct {
	ID          string     `bson:"_id"`
	Activated   bool       `bson:"activated"`
	ActivatedAt *time.Time `bson:"activatedAt"`
	CodeHash    string     `bson:"codeHash"`
	Version     int64      `bson:"version"`
}

func (d *activationDoc) stamp(id string, version int64) { d.ID, d.Version = id, version }
func (d *activationDoc) current() int64                 { return d.Version }

func (d activationDoc) activation() domain.Activation {
	a := domain.Activation{Activated: d.Activated, CodeHash: d.CodeHash, Version: d.Version}
	if d.ActivatedAt != nil {
		a.ActivatedAt = d.ActivatedAt.UTC()
	}
	return a
}

// System is the Mongo SystemStore.
type System struct {
	coll *mongo.Collection
}

// NewSystem returns the store over db. The collection needs no index beyond _id.
func NewSystem(db *mongo.Database) *System {
	return &System{coll: db.Collection(SystemCollection)}
}

// FindSettings returns the stored settings, none before the first seed.
func (s *System) FindSettings(ctx context.Context) (domain.Settings, error) {
	d, err := mongox.FindOne[settingsDoc](ctx, s.coll, bson.M{"_id": settingsID})
	if errors.Is(err, mongox.ErrNotFound) {
		return domain.Settings{}, nil
	}
	if err != nil {
		return domain.Settings{}, fmt.Errorf("find settings: %w", err)
	}
	return d.settings(), nil
}

// UpdateSettings applies fn to the stored settings (none before the first seed) and
// writes them back, conditionally on the version read.
func (s *System) UpdateSettings(ctx context.Context, fn func(*domain.Settings) (bool, error)) (domain.Settings, error) {
	d, err := updateSingleton(ctx, s.coll, settingsID, func(d *settingsDoc) (bool, error) {
		st := d.settings()
		write, err := fn(&st)
		if err != nil || !write {
			return false, err
		}
		d.Settings = settingDocs(st)
		return true, nil
	})
	if err != nil {
		return domain.Settings{}, err
	}
	return d.settings(), nil
}

// FindActivation returns the activation state, the zero (locked) one before any.
func (s *System) FindActivation(ctx context.Context) (domain.Activation, error) {
	d, err := mongox.FindOne[activationDoc](ctx, s.coll, bson.M{"_id": activationID})
	if errors.Is(err, mongox.ErrNotFound) {
		return domain.Activation{}, nil
	}
	if err != nil {
		return domain.Activation{}, fmt.Errorf("find activation: %w", err)
	}
	return d.activation(), nil
}

// UpdateActivation applies fn to the activation state and writes it back, conditionally
// on the version read.
func (s *System) UpdateActivation(ctx context.Context, fn func(*domain.Activation) (bool, error)) (domain.Activation, error) {
	d, err := updateSingleton(ctx, s.coll, activationID, func(d *activationDoc) (bool, error) {
		a := d.activation()
		write, err := fn(&a)
		if err != nil || !write {
			return false, err
		}
		d.Activated, d.CodeHash, d.ActivatedAt = a.Activated, a.CodeHash, nil
		if !a.ActivatedAt.IsZero() {
			at := a.ActivatedAt.UTC()
			d.ActivatedAt = &at
		}
		return true, nil
	})
	if err != nil {
		return domain.Activation{}, err
	}
	return d.activation(), nil
}

// singleton is a document with a fixed _id and a version.
type singleton[D any] interface {
	*D
	stamp(id string, version int64)
	current() int64
}

// updateSingleton loads the document id (the zero one when absent), lets change modify
// it, and writes it back when change says so: an insert when it was absent, else an update
// conditional on the version read. A write that lost a race is retried from the load.
func updateSingleton[D any, P singleton[D]](ctx context.Context, coll *mongo.Collection, id string, change func(P) (bool, error)) (D, error) {
	var zero D
	for range maxAttempts {
		d, err := mongox.FindOne[D](ctx, coll, bson.M{"_id": id})
		found := err == nil
		if err != nil && !errors.Is(err, mongox.ErrNotFound) {
			return zero, fmt.Errorf("load %s: %w", id, err)
		}
		version := P(&d).current()
		write, err := change(&d)
		if err != nil {
			return zero, err
		}
		if !write {
			return d, nil
		}
		if !found {
			P(&d).stamp(id, 1)
			if _, err := coll.InsertOne(ctx, d); err != nil {
				if mongox.IsDuplicateKey(err) {
					continue
				}
				return zero, fmt.Errorf("insert %s: %w", id, err)
			}
			return d, nil
		}
		set, err := setFields(d)
		if err != nil {
			return zero, err
		}
		err = mongox.UpdateVersioned(ctx, coll, bson.M{"_id": id}, version, bson.M{"$set": set})
		if errors.Is(err, mongox.ErrConflict) {
			continue
		}
		if err != nil {
			return zero, fmt.Errorf("update %s: %w", id, err)
		}
		P(&d).stamp(id, version+1)
		return d, nil
	}
	return zero, apperr.New(apperr.ConcurrentModification, "The %s are being changed by others; try again.", id)
}

// setFields returns a document's fields for a $set: all but _id and the version, which
// UpdateVersioned increments itself.
func setFields(doc any) (bson.M, error) {
	raw, err := bson.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	var m bson.M
	if err := bson.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	delete(m, "_id")
	delete(m, mongox.VersionField)
	return m, nil
}
