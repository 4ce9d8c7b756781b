package mongostore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/jsonbody"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// ParametersCollection is the collection of global parameters, keyed by name in _id.
const ParametersCollection = "parameters"

// paramDoc is a global parameter as stored. Value and default are kept as JSON text, so
// any JSON value (numbers with full precision, lists, objects) comes back as it went in;
// "" means none. A password's are JSON strings of sealed values.
type paramDoc struct {
	Name           string      `bson:"_id"`
	Label          string      `bson:"label"`
	Description    string      `bson:"description"`
	Type           string      `bson:"type"`
	Default        string      `bson:"default"`
	Value          string      `bson:"value"`
	Required       bool        `bson:"required"`
	Placeholder    string      `bson:"placeholder"`
	HelperText     string      `bson:"helperText"`
	Options        []optionDoc `bson:"options"`
	MinValueLength *int        `bson:"minValueLength"`
	MaxValueLength *int        `bson:"maxValueLength"`
	ReadOnly       bool        `bson:"readOnly"`
	HiddenValue    bool        `bson:"hiddenValue"`
	Version        int64       `bson:"version"`
}

func toParamDoc(p domain.Param) (paramDoc, error) {
	value, err := jsonText(p.Value)
	if err != nil {
		return paramDoc{}, fmt.Errorf("parameter %s value: %w", p.Name, err)
	}
	def, err := jsonText(p.Default)
	if err != nil {
		return paramDoc{}, fmt.Errorf("parameter %s default: %w", p.Name, err)
	}
	return paramDoc{
		Name: p.Name, Label: p.Label, Description: p.Description, Type: string(p.Type),
		Default: def, Value: value, Required: p.Required, Placeholder: p.Placeholder,
		HelperText: p.HelperText, Options: optionDocs(p.Options), MinValueLength: p.MinValueLength,
		MaxValueLength: p.MaxValueLength, ReadOnly: p.ReadOnly, HiddenValue: p.HiddenValue, Version: p.Version,
	}, nil
}

func (d paramDoc) param() (domain.Param, error) {
	value, err := fromJSONText(d.Value)
	if err != nil {
		return domain.Param{}, fmt.Errorf("parameter %s value: %w", d.Name, err)
	}
	def, err := fromJSONText(d.Default)
	if err != nil {
		return domain.Param{}, fmt.Errorf("parameter %s default: %w", d.Name, err)
	}
	return domain.Param{
		Name: d.Name, Label: d.Label, Description: d.Description, Type: domain.ParamType(d.Type),
		Default: def, Value: value, Required: d.Required, Placeholder: d.Placeholder,
		HelperText: d.HelperText, Options: domainOptions(d.Options), MinValueLength: d.MinValueLength,
		MaxValueLength: d.MaxValueLength, ReadOnly: d.ReadOnly, HiddenValue: d.HiddenValue, Version: d.Version,
	}, nil
}

func jsonText(v any) (string, error) {
	if v == nil {
		return "", nil
	}
	raw, err := json.Marshal(v)
	return string(raw), err
}

func fromJSONText(s string) (any, error) {
	if s == "" {
		return nil, nil
	}
	var v any
	err := jsonbody.DecodeNumbers([]byte(s), &v)
	return v, err
}

// Params is the Mongo ParamStore.
type Params struct {
	coll *mongo.Collection
}

// NewParams returns the store over db. Names are unique as the _id; no other index.
func NewParams(db *mongo.Database) *Params {
	return &Params{coll: db.Collection(ParametersCollection)}
}

// CreateParam stores a new parameter at version 1.
func (s *Params) CreateParam(ctx context.Context, p domain.Param) error {
	p.Version = 1
	doc, err := toParamDoc(p)
	if err != nil {
		return err
	}
	if _, err := s.coll.InsertOne(ctx, doc); err != nil {
		if mongox.IsDuplicateKey(err) {
			return domain.ParamExists(p.Name)
		}
		return fmt.Errorf("insert parameter %s: %w", p.Name, err)
	}
	return nil
}

// FindParams returns every parameter, ordered by name.
func (s *Params) FindParams(ctx context.Context) ([]domain.Param, error) {
	cur, err := s.coll.Find(ctx, bson.M{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("find parameters: %w", err)
	}
	var docs []paramDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read parameters: %w", err)
	}
	out := make([]domain.Param, len(docs))
	for i, d := range docs {
		if out[i], err = d.param(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *Params) findParam(ctx context.Context, name string) (domain.Param, error) {
	d, err := mongox.FindOne[paramDoc](ctx, s.coll, bson.M{"_id": name})
	if errors.Is(err, mongox.ErrNotFound) {
		return domain.Param{}, domain.ParamNotFound(name)
	}
	if err != nil {
		return domain.Param{}, fmt.Errorf("find parameter %s: %w", name, err)
	}
	return d.param()
}

// UpdateParam applies fn and writes the result conditionally on the version read.
func (s *Params) UpdateParam(ctx context.Context, name string, fn func(*domain.Param) error) (domain.Param, error) {
	for range maxAttempts {
		p, err := s.findParam(ctx, name)
		if err != nil {
			return domain.Param{}, err
		}
		version := p.Version
		if err := fn(&p); err != nil {
			return domain.Param{}, err
		}
		p.Name, p.Version = name, version
		doc, err := toParamDoc(p)
		if err != nil {
			return domain.Param{}, err
		}
		set, err := setFields(doc)
		if err != nil {
			return domain.Param{}, err
		}
		err = mongox.UpdateVersioned(ctx, s.coll, bson.M{"_id": name}, version, bson.M{"$set": set})
		if errors.Is(err, mongox.ErrConflict) {
			continue
		}
		if err != nil {
			return domain.Param{}, fmt.Errorf("update parameter %s: %w", name, err)
		}
		p.Version++
		return p, nil
	}
	return domain.Param{}, apperr.New(apperr.ConcurrentModification, "Global parameter '%s' is being changed by others; try again.", name)
}

// DeleteParam removes the parameter called name.
func (s *Params) DeleteParam(ctx context.Context, name string) error {
	res, err := s.coll.DeleteOne(ctx, bson.M{"_id": name})
	if err != nil {
		return fmt.Errorf("delete parameter %s: %w", name, err)
	}
	if res.DeletedCount == 0 {
		return domain.ParamNotFound(name)
	}
	return nil
}
