package app

import (
	"context"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// legacyActions finds an action under either of its ids: the one it is answered with,
// and the one actions were made with before their ids lost their dot
// (domain.LegacyActionID). The actions of runs that were waiting when an installation was
// upgraded are stored under the old one and still read and decided; a client that kept an
// old id still finds its action. Nothing is rewritten: the stored id stays what it was.
type legacyActions struct{ ActionStore }

// otherActionID is the other id action id may be stored under.
func otherActionID(id string) (string, bool) {
	if public := domain.PublicActionID(id); public != id {
		return public, true
	}
	return domain.LegacyActionID(id)
}

func (s legacyActions) FindAction(ctx context.Context, id string) (*domain.Action, error) {
	a, err := s.ActionStore.FindAction(ctx, id)
	if other, ok := otherActionID(id); ok && apperr.HasReason(err, apperr.ActionNotFound) {
		if a, lerr := s.ActionStore.FindAction(ctx, other); lerr == nil {
			return a, nil
		}
	}
	return a, err
}

func (s legacyActions) UpdateAction(ctx context.Context, id string, fn func(*domain.Action) error) (*domain.Action, error) {
	a, err := s.ActionStore.UpdateAction(ctx, id, fn)
	if other, ok := otherActionID(id); ok && apperr.HasReason(err, apperr.ActionNotFound) {
		if a, lerr := s.ActionStore.UpdateAction(ctx, other, fn); !apperr.HasReason(lerr, apperr.ActionNotFound) {
			return a, lerr
		}
	}
	return a, err
}
