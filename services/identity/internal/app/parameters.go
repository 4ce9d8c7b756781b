package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// ParamStore keeps global parameters, one record per name.
type ParamStore interface {
	// CreateParam stores a new parameter; a taken name fails with PARAMS_NON_UNIQUE_REFERENCE.
	CreateParam(ctx context.Context, p domain.Param) error
	// FindParams returns every parameter, by name.
	FindParams(ctx context.Context) ([]domain.Param, error)
	// UpdateParam loads the parameter, applies fn and writes it back if nobody changed it
	// since; a missing one fails with domain.ErrParamNotFound.
	UpdateParam(ctx context.Context, name string, fn func(*domain.Param) error) (domain.Param, error)
	// DeleteParam removes the parameter; a missing one fails with domain.ErrParamNotFound.
	DeleteParam(ctx context.Context, name string) error
}

// Sealer encrypts secrets for storage and decrypts them for use; *secrets.Box is one.
type Sealer interface {
	Seal(plain string) (string, error)
	Open(sealed string) (string, error)
}

// NoSealer is the Sealer of a service configured without a secret key: anything that
// needs a secret sealed or opened fails, and the rest works.
type NoSealer struct{}

var errNoSecretKey = apperr.New(apperr.Internal, "Secrets cannot be stored or read: no secret key is configured (%s).", secrets.EnvKey)

// Seal fails: there is no key.
func (NoSealer) Seal(string) (string, error) { return "", errNoSecretKey }

// Open fails: there is no key.
func (NoSealer) Open(string) (string, error) { return "", errNoSecretKey }

// Params is the global parameter use cases. Everyone authenticated reads them, with the
// values of password parameters masked; writing takes `parameter/write` instance-wide.
type Params struct {
	store  ParamStore
	sealer Sealer
}

// NewParams returns the global parameter use cases.
func NewParams(store ParamStore, sealer Sealer) *Params {
	return &Params{store: store, sealer: sealer}
}

// requireSignedIn refuses requests without an authenticated principal.
func requireSignedIn(ctx context.Context) error {
	if p, ok := auth.FromContext(ctx); !ok || p.Type == auth.TypeAnonymous || p.Type == "" {
		return apperr.New(apperr.Unauthenticated, "Authentication is required.")
	}
	return nil
}

// Params lists the global parameters, masked.
func (s *Params) Params(ctx context.Context) ([]domain.Param, error) {
	if err := requireSignedIn(ctx); err != nil {
		return nil, err
	}
	params, err := s.store.FindParams(ctx)
	if err != nil {
		return nil, err
	}
	for i := range params {
		params[i] = params[i].Masked()
	}
	return params, nil
}

// Names lists the global parameters' names, in the store's order, for Baton's own services:
// the workflows service tells with them which references of a workflow resolve.
func (s *Params) Names(ctx context.Context) ([]string, error) {
	if _, err := auth.RequireService(ctx); err != nil {
		return nil, err
	}
	params, err := s.store.FindParams(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.Name
	}
	return names, nil
}

// CreateParam adds a global parameter; a taken name answers 409 PARAMS_NON_UNIQUE_REFERENCE.
func (s *Params) CreateParam(ctx context.Context, p domain.Param) (domain.Param, error) {
	if _, err := auth.Require(ctx, auth.Scope{}, "parameter", "write"); err != nil {
		return domain.Param{}, err
	}
	if err := p.Normalize(); err != nil {
		return domain.Param{}, err
	}
	p.KeepSecrets(nil)
	if err := s.seal(&p); err != nil {
		return domain.Param{}, err
	}
	if err := s.store.CreateParam(ctx, p); err != nil {
		return domain.Param{}, err
	}
	return p.Masked(), nil
}

// ReplaceParam replaces the global parameter named in p, or creates it (created reports
// which). A password's value or default that p omits or sends masked keeps the stored one.
func (s *Params) ReplaceParam(ctx context.Context, p domain.Param) (_ domain.Param, created bool, _ error) {
	if _, err := auth.Require(ctx, auth.Scope{}, "parameter", "write"); err != nil {
		return domain.Param{}, false, err
	}
	if err := p.Normalize(); err != nil {
		return domain.Param{}, false, err
	}
	// Incoming secrets are sealed before merging, so whatever KeepSecrets carries over from
	// the stored record (sealed already) and what is new end up alike.
	if err := s.seal(&p); err != nil {
		return domain.Param{}, false, err
	}
	// Another writer may create or delete the name between the two steps; a few rounds
	// settle it.
	for range maxParamAttempts {
		out, err := s.store.UpdateParam(ctx, p.Name, func(stored *domain.Param) error {
			next := p
			next.KeepSecrets(stored)
			next.Version = stored.Version
			*stored = next
			return nil
		})
		if err == nil {
			return out.Masked(), false, nil
		}
		if !errors.Is(err, domain.ErrParamNotFound) {
			return domain.Param{}, false, err
		}
		fresh := p
		fresh.KeepSecrets(nil)
		err = s.store.CreateParam(ctx, fresh)
		if err == nil {
			return fresh.Masked(), true, nil
		}
		if !apperr.HasReason(err, apperr.ParamsNonUniqueReference) {
			return domain.Param{}, false, err
		}
	}
	return domain.Param{}, false, apperr.New(apperr.ConcurrentModification,
		"Global parameter '%s' is being changed by others; try again.", p.Name)
}

const maxParamAttempts = 5

// DeleteParam removes a global parameter; an unknown name answers 404 PARAMS_NOT_FOUND.
func (s *Params) DeleteParam(ctx context.Context, name string) error {
	if _, err := auth.Require(ctx, auth.Scope{}, "parameter", "write"); err != nil {
		return err
	}
	return s.store.DeleteParam(ctx, name)
}

// ResolvedParams returns every global parameter's effective value by name, secrets
// opened: what `$(global.params.<name>)` resolves to in a run (see domain.Param.Effective).
// It checks no caller — it is for Baton's own use (the engine, through an internal
// endpoint for service principals), never for API responses, and its result must not be
// logged or put into records users can read.
func (s *Params) ResolvedParams(ctx context.Context) (map[string]string, error) {
	params, err := s.opened(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(params))
	for _, p := range params {
		out[p.Name] = p.Effective()
	}
	return out, nil
}

// opened returns every global parameter with its secrets opened; like ResolvedParams, for
// Baton's own use only.
func (s *Params) opened(ctx context.Context) ([]domain.Param, error) {
	params, err := s.store.FindParams(ctx)
	if err != nil {
		return nil, err
	}
	for i := range params {
		if err := s.open(&params[i]); err != nil {
			return nil, fmt.Errorf("global parameter %s: %w", params[i].Name, err)
		}
	}
	return params, nil
}

// seal seals a password parameter's plain value and default; the mask and nil are left
// for KeepSecrets, and "" (no secret) as it is.
func (s *Params) seal(p *domain.Param) error {
	if !p.Secret() {
		return nil
	}
	for _, v := range []*any{&p.Value, &p.Default} {
		plain, ok := (*v).(string)
		if !ok || plain == "" || plain == secrets.Mask {
			continue
		}
		sealed, err := s.sealer.Seal(plain)
		if err != nil {
			return err
		}
		*v = sealed
	}
	return nil
}

// open opens a stored password parameter's value and default.
func (s *Params) open(p *domain.Param) error {
	if !p.Secret() {
		return nil
	}
	for _, v := range []*any{&p.Value, &p.Default} {
		sealed, ok := (*v).(string)
		if !ok || !secrets.IsSealed(sealed) {
			continue
		}
		plain, err := s.sealer.Open(sealed)
		if err != nil {
			return err
		}
		*v = plain
	}
	return nil
}
