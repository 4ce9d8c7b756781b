package cli

import (
	"context"
	"errors"

	"github.com/baton-flow/baton/gateway/internal/cli/watch"
)

// API is what the commands ask of a Baton server. The Go SDK's client implements it
// through a thin adapter; tests give it fakes where no server is needed.
type API interface {
	// WhoAmI says who the token acts as (a user's name or email, or a token's principal).
	WhoAmI(ctx context.Context) (string, error)
	// Watch gives a run's states until it ends.
	watch.Source
}

// ErrUnauthorized is what an API returns, wrapped, when the server refuses the token.
var ErrUnauthorized = errors.New("the server refused the token")
