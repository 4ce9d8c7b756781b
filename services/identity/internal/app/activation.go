package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// ActivationConfig is how an installation gets unlocked.
type ActivationConfig struct {
	// Code is a one-time code from configuration; it always unlocks, besides a generated one.
	Code string
	// AutoActivate unlocks the installation at start (standalone development mode).
	AutoActivate bool
	// Publish hands a generated code to the operator (writes it to a file readable only by
	// the service user). With Code empty and Publish set, the first start of a locked
	// installation generates a code; with neither, it stays locked until one is configured.
	Publish func(code string) error
}

// Activation is the activation use cases: a fresh installation is locked until someone
// presents its one-time code, then stays unlocked.
type Activation struct {
	store SystemStore
	cfg   ActivationConfig
	now   func() time.Time
	// activated remembers an unlock: it is never undone, so once seen the store need not
	// be asked again.
	activated atomic.Bool
}

// NewActivation returns the activation use cases.
func NewActivation(store SystemStore, cfg ActivationConfig) *Activation {
	return &Activation{store: store, cfg: cfg, now: time.Now}
}

// Prepare runs at start: it unlocks the installation when configured to, or makes sure a
// locked one has a code someone can present. It reports whether it generated (and
// published) a code. A code is generated once per installation, by whichever replica gets
// there first; if publishing it fails, it is withdrawn so a later start tries again.
func (a *Activation) Prepare(ctx context.Context) (generated bool, err error) {
	if a.cfg.AutoActivate {
		return false, a.unlock(ctx)
	}
	st, err := a.store.FindActivation(ctx)
	if err != nil {
		return false, fmt.Errorf("activation state: %w", err)
	}
	if st.Activated {
		a.activated.Store(true)
		return false, nil
	}
	if a.cfg.Code != "" || a.cfg.Publish == nil {
		return false, nil
	}
	code, err := newActivationCode()
	if err != nil {
		return false, err
	}
	hash := domain.HashCode(code)
	won := false
	_, err = a.store.UpdateActivation(ctx, func(st *domain.Activation) (bool, error) {
		won = !st.Activated && st.CodeHash == ""
		if won {
			st.CodeHash = hash
		}
		return won, nil
	})
	if err != nil {
		return false, fmt.Errorf("activation code: %w", err)
	}
	if !won {
		return false, nil
	}
	if err := a.cfg.Publish(code); err != nil {
		_, _ = a.store.UpdateActivation(context.WithoutCancel(ctx), func(st *domain.Activation) (bool, error) {
			if st.CodeHash != hash {
				return false, nil
			}
			st.CodeHash = ""
			return true, nil
		})
		return false, fmt.Errorf("hand out the activation code: %w", err)
	}
	return true, nil
}

// newActivationCode returns 128 random bits as 32 hex digits: nothing to guess, easy to
// copy.
func newActivationCode() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("activation code: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// Activated reports whether the installation is unlocked. Anyone may ask: PUT /activate
// without a body answers it to anonymous callers.
func (a *Activation) Activated(ctx context.Context) (bool, error) {
	if a.activated.Load() {
		return true, nil
	}
	st, err := a.store.FindActivation(ctx)
	if err != nil {
		return false, err
	}
	if st.Activated {
		a.activated.Store(true)
	}
	return st.Activated, nil
}

// ActivatedForService is Activated for the internal endpoint the gateway asks; only
// Baton's own services may call it.
func (a *Activation) ActivatedForService(ctx context.Context) (bool, error) {
	p, ok := auth.FromContext(ctx)
	if !ok || p.Type == auth.TypeAnonymous || p.Type == "" {
		return false, apperr.New(apperr.Unauthenticated, "Authentication is required.")
	}
	if _, err := auth.RequireService(ctx); err != nil {
		return false, err
	}
	return a.Activated(ctx)
}

// Activate unlocks the installation with its one-time code and answers true; a wrong code
// answers 400, on an installation unlocked already too (API.md §2), and so does a generated
// code once spent. A configured code answers true whenever it is presented.
func (a *Activation) Activate(ctx context.Context, otc string) (bool, error) {
	st, err := a.store.FindActivation(ctx)
	if err != nil {
		return false, err
	}
	// Codes are copied from files and terminals: surrounding blanks are not part of them.
	otc = strings.TrimSpace(otc)
	want := strings.TrimSpace(a.cfg.Code)
	configured := want != "" && domain.CodeMatches(otc, domain.HashCode(want))
	if otc == "" || (!configured && !domain.CodeMatches(otc, st.CodeHash)) {
		return false, domain.ErrWrongActivationCode
	}
	if st.Activated {
		a.activated.Store(true)
		return true, nil
	}
	if err := a.unlock(ctx); err != nil {
		return false, err
	}
	return true, nil
}

// unlock records the installation as activated; the generated code is spent.
func (a *Activation) unlock(ctx context.Context) error {
	_, err := a.store.UpdateActivation(ctx, func(st *domain.Activation) (bool, error) {
		if st.Activated {
			return false, nil
		}
		st.Activated, st.ActivatedAt, st.CodeHash = true, a.now().UTC().Truncate(time.Millisecond), ""
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("activate: %w", err)
	}
	a.activated.Store(true)
	return nil
}
