package app

import (
	"context"
	"fmt"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// SystemStore keeps the instance-wide records: the settings and the activation state, one
// record each.
type SystemStore interface {
	// FindSettings returns the stored settings; before the first seed, none (no error).
	FindSettings(ctx context.Context) (domain.Settings, error)
	// UpdateSettings loads the settings (none before the first seed), applies fn and writes
	// them back if nobody changed them since. fn reporting false writes nothing.
	UpdateSettings(ctx context.Context, fn func(*domain.Settings) (bool, error)) (domain.Settings, error)
	// FindActivation returns the activation state; before any, the zero (locked) one.
	FindActivation(ctx context.Context) (domain.Activation, error)
	// UpdateActivation is UpdateSettings for the activation state.
	UpdateActivation(ctx context.Context, fn func(*domain.Activation) (bool, error)) (domain.Activation, error)
}

// System is the settings, features, context and navigation use cases.
type System struct {
	store   SystemStore
	sealer  Sealer
	version string
}

// NewSystem returns the system use cases; version is the build's, for the context.
func NewSystem(store SystemStore, sealer Sealer, version string) *System {
	return &System{store: store, sealer: sealer, version: version}
}

// SeedSettings brings the stored settings up to the catalogue: what is missing is added
// with its default and every stored value is kept, so it is safe at every start and in
// every replica at once. Secured values left unsealed (a config whose type became
// secured) are sealed.
func (s *System) SeedSettings(ctx context.Context) error {
	_, err := s.store.UpdateSettings(ctx, func(st *domain.Settings) (bool, error) {
		changed := st.Seed(domain.SettingCatalogue())
		sealed, err := s.sealLoose(st)
		return changed || sealed, err
	})
	if err != nil {
		return fmt.Errorf("seed settings: %w", err)
	}
	return nil
}

func (s *System) sealLoose(st *domain.Settings) (bool, error) {
	changed := false
	for i := range st.Items {
		for j := range st.Items[i].Config {
			c := &st.Items[i].Config[j]
			if c.Type != domain.ConfigSecured || c.Value == "" || secrets.IsSealed(c.Value) {
				continue
			}
			sealed, err := s.sealer.Seal(c.Value)
			if err != nil {
				return false, err
			}
			c.Value, changed = sealed, true
		}
	}
	return changed, nil
}

// Settings returns the settings, secured values masked; it takes `system/read`.
func (s *System) Settings(ctx context.Context) (domain.Settings, error) {
	if _, err := auth.Require(ctx, auth.Scope{}, "system", "read"); err != nil {
		return domain.Settings{}, err
	}
	st, err := s.settings(ctx)
	if err != nil {
		return domain.Settings{}, err
	}
	return st.Masked(), nil
}

// settings reads the stored settings, falling back to the catalogue's defaults should
// they not have been seeded.
func (s *System) settings(ctx context.Context) (domain.Settings, error) {
	st, err := s.store.FindSettings(ctx)
	if err != nil {
		return domain.Settings{}, err
	}
	if len(st.Items) == 0 {
		st.Seed(domain.SettingCatalogue())
	}
	return st, nil
}

// UpdateSettings changes values of existing settings, all or none; it takes `system/write`.
// Unknown keys and invalid values answer 400 listing each. Secured values are sealed; a
// secured value omitted or sent masked keeps the stored one. The answer is masked.
func (s *System) UpdateSettings(ctx context.Context, changes []domain.SettingChange) (domain.Settings, error) {
	if _, err := auth.Require(ctx, auth.Scope{}, "system", "write"); err != nil {
		return domain.Settings{}, err
	}
	st, err := s.store.UpdateSettings(ctx, func(st *domain.Settings) (bool, error) {
		if len(st.Items) == 0 {
			st.Seed(domain.SettingCatalogue())
		}
		return true, st.Apply(changes, s.sealer.Seal)
	})
	if err != nil {
		return domain.Settings{}, err
	}
	return st.Masked(), nil
}

// ResolvedSettings returns the settings with secured values opened, for Baton's own use:
// quota defaults, the task timeout, event sinks, integration credentials. It checks no
// caller and must never reach a response, a log line or an event.
func (s *System) ResolvedSettings(ctx context.Context) (domain.Settings, error) {
	st, err := s.settings(ctx)
	if err != nil {
		return domain.Settings{}, err
	}
	for i := range st.Items {
		for j := range st.Items[i].Config {
			c := &st.Items[i].Config[j]
			if !secrets.IsSealed(c.Value) {
				continue
			}
			if c.Value, err = s.sealer.Open(c.Value); err != nil {
				return domain.Settings{}, fmt.Errorf("setting %s.%s: %w", st.Items[i].Key, c.Key, err)
			}
		}
	}
	return st, nil
}

// Features returns the feature flags; any authenticated caller may read them.
func (s *System) Features(ctx context.Context) (map[string]bool, error) {
	if err := requireSignedIn(ctx); err != nil {
		return nil, err
	}
	st, err := s.settings(ctx)
	if err != nil {
		return nil, err
	}
	return st.FeatureFlags(), nil
}

// Context returns the header's context for the caller, its navigation without a team.
func (s *System) Context(ctx context.Context) (domain.Context, error) {
	p, st, err := s.callerAndSettings(ctx)
	if err != nil {
		return domain.Context{}, err
	}
	return domain.HeaderContext(s.version, navAccess(p, ""), st), nil
}

// Navigation returns the caller's navigation, with team's pages when the caller belongs
// to team (a team it does not belong to is simply left out, so the answer tells nothing
// about which teams exist).
func (s *System) Navigation(ctx context.Context, team string) ([]domain.NavItem, error) {
	p, st, err := s.callerAndSettings(ctx)
	if err != nil {
		return nil, err
	}
	return domain.Navigation(navAccess(p, team), st), nil
}

func (s *System) callerAndSettings(ctx context.Context) (auth.Principal, domain.Settings, error) {
	if err := requireSignedIn(ctx); err != nil {
		return auth.Principal{}, domain.Settings{}, err
	}
	p, _ := auth.FromContext(ctx)
	st, err := s.settings(ctx)
	return p, st, err
}

// navAccess decides what navigation p sees: the administration menu when it may read the
// instance's settings (admins, operators, global tokens granted system/read), a team's
// pages when it belongs to the team — a member, the team's own team or workflow token, or
// a principal that sees every team.
func navAccess(p auth.Principal, team string) domain.NavAccess {
	member := team != "" && (p.SeesAllTeams() || p.Teams[team] != "" ||
		((p.Type == auth.TypeTeam || p.Type == auth.TypeWorkflow) && p.Team == team))
	return domain.NavAccess{Admin: p.Can(auth.Scope{}, "system", "read"), Team: team, Member: member}
}
