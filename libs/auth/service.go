package auth

import (
	"context"

	"github.com/baton-flow/baton/libs/apperr"
)

// RequireService returns the principal of ctx when it is one of Baton's own services, and
// a PERMISSION_DENIED error naming the caller's type otherwise: internal endpoints answer
// questions (who holds this secret, what a run resolves its parameters against) that no
// user or token may ask.
func RequireService(ctx context.Context) (Principal, error) {
	p, ok := FromContext(ctx)
	switch {
	case !ok || p.Type == "":
		return Principal{}, apperr.New(apperr.PermissionDenied,
			"Only Baton's own services may call this; the request carries no principal.")
	case p.Type != TypeService:
		return Principal{}, apperr.New(apperr.PermissionDenied,
			"Only Baton's own services may call this, not a principal of type %s.", p.Type)
	}
	return p, nil
}
