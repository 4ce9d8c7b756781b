package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

const (
	qParam  = `SELECT version, doc FROM params WHERE name = ?`
	qSystem = `SELECT version, doc FROM system WHERE id = ?`
)

// CreateParam stores a new parameter at version 1; a taken name fails with
// domain.ParamExists.
func (s *Store) CreateParam(ctx context.Context, p domain.Param) error {
	p.Version = 1
	doc, err := encode(p)
	if err != nil {
		return fmt.Errorf("parameter %s: %w", p.Name, err)
	}
	err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(`INSERT INTO params (name, version, doc) VALUES (?, 1, ?)`, p.Name, string(doc))
		return err
	})
	if sqlitex.IsUnique(err) {
		return domain.ParamExists(p.Name)
	}
	if err != nil {
		return fmt.Errorf("insert parameter %s: %w", p.Name, err)
	}
	return nil
}

func scanParam(row scanner) (domain.Param, error) {
	var version int64
	var doc []byte
	if err := row.Scan(&version, &doc); err != nil {
		return domain.Param{}, err
	}
	var p domain.Param
	if err := decode(doc, &p); err != nil {
		return domain.Param{}, err
	}
	p.Version = version
	return p, nil
}

// FindParams returns every parameter, ordered by name.
func (s *Store) FindParams(ctx context.Context) ([]domain.Param, error) {
	rows, err := s.db.Query(ctx, `SELECT version, doc FROM params ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("find parameters: %w", err)
	}
	out, err := scanAll(rows, scanParam, "parameters")
	if out == nil && err == nil {
		out = []domain.Param{}
	}
	return out, err
}

// UpdateParam applies fn and writes the result conditionally on the version read.
func (s *Store) UpdateParam(ctx context.Context, name string, fn func(*domain.Param) error) (domain.Param, error) {
	for range maxAttempts {
		p, err := scanParam(s.db.QueryRow(ctx, qParam, name))
		if errors.Is(err, sql.ErrNoRows) {
			return domain.Param{}, domain.ParamNotFound(name)
		}
		if err != nil {
			return domain.Param{}, fmt.Errorf("find parameter %s: %w", name, err)
		}
		read := p.Version
		if err := fn(&p); err != nil {
			return domain.Param{}, err
		}
		p.Name, p.Version = name, read
		doc, err := encode(p)
		if err != nil {
			return domain.Param{}, fmt.Errorf("parameter %s: %w", name, err)
		}
		err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
			n, err := tx.ExecAffected(`UPDATE params SET version = version + 1, doc = ? WHERE name = ? AND version = ?`, string(doc), name, read)
			if err == nil && n == 0 {
				return errLost
			}
			return err
		})
		if errors.Is(err, errLost) {
			continue
		}
		if err != nil {
			return domain.Param{}, fmt.Errorf("update parameter %s: %w", name, err)
		}
		p.Version = read + 1
		return p, nil
	}
	return domain.Param{}, busy(fmt.Sprintf("Global parameter '%s'", name))
}

// DeleteParam removes the parameter called name.
func (s *Store) DeleteParam(ctx context.Context, name string) error {
	var n int64
	err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		var err error
		n, err = tx.ExecAffected(`DELETE FROM params WHERE name = ?`, name)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete parameter %s: %w", name, err)
	}
	if n == 0 {
		return domain.ParamNotFound(name)
	}
	return nil
}

// The system table's rows.
const (
	settingsID   = "settings"
	activationID = "activation"
)

// FindSettings returns the stored settings, none before the first seed.
func (s *Store) FindSettings(ctx context.Context) (domain.Settings, error) {
	var st domain.Settings
	v, _, err := s.findSingleton(ctx, settingsID, &st)
	st.Version = v
	return st, err
}

// UpdateSettings applies fn to the stored settings (none before the first seed) and
// writes them back, conditionally on the version read.
func (s *Store) UpdateSettings(ctx context.Context, fn func(*domain.Settings) (bool, error)) (domain.Settings, error) {
	for range maxAttempts {
		var st domain.Settings
		v, found, err := s.findSingleton(ctx, settingsID, &st)
		if err != nil {
			return domain.Settings{}, err
		}
		st.Version = v
		write, err := fn(&st)
		if err != nil {
			return domain.Settings{}, err
		}
		if !write {
			st.Version = v
			return st, nil
		}
		st.Version = 0
		next, err := s.writeSingleton(ctx, settingsID, st, found, v)
		if errors.Is(err, errLost) {
			continue
		}
		if err != nil {
			return domain.Settings{}, err
		}
		st.Version = next
		return st, nil
	}
	return domain.Settings{}, busy("The settings")
}

// FindActivation returns the activation state, the zero (locked) one before any.
func (s *Store) FindActivation(ctx context.Context) (domain.Activation, error) {
	var a domain.Activation
	v, _, err := s.findSingleton(ctx, activationID, &a)
	a.Version = v
	a.ActivatedAt = a.ActivatedAt.UTC()
	return a, err
}

// UpdateActivation applies fn to the activation state and writes it back, conditionally
// on the version read.
func (s *Store) UpdateActivation(ctx context.Context, fn func(*domain.Activation) (bool, error)) (domain.Activation, error) {
	for range maxAttempts {
		var a domain.Activation
		v, found, err := s.findSingleton(ctx, activationID, &a)
		if err != nil {
			return domain.Activation{}, err
		}
		a.Version, a.ActivatedAt = v, a.ActivatedAt.UTC()
		write, err := fn(&a)
		if err != nil {
			return domain.Activation{}, err
		}
		if !write {
			a.Version = v
			return a, nil
		}
		a.Version, a.ActivatedAt = 0, a.ActivatedAt.UTC()
		next, err := s.writeSingleton(ctx, activationID, a, found, v)
		if errors.Is(err, errLost) {
			continue
		}
		if err != nil {
			return domain.Activation{}, err
		}
		a.Version = next
		return a, nil
	}
	return domain.Activation{}, busy("The activation")
}

// findSingleton reads the system row id into v; found is false (and v untouched) before
// the first write.
func (s *Store) findSingleton(ctx context.Context, id string, v any) (version int64, found bool, err error) {
	var doc []byte
	err = s.db.QueryRow(ctx, qSystem, id).Scan(&version, &doc)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("find %s: %w", id, err)
	}
	if err := decode(doc, v); err != nil {
		return 0, false, fmt.Errorf("%s: %w", id, err)
	}
	return version, true, nil
}

// writeSingleton writes the system row id: an insert at version 1 when it was not found,
// else an update on the version read. It answers the version written, or errLost.
func (s *Store) writeSingleton(ctx context.Context, id string, v any, found bool, read int64) (int64, error) {
	doc, err := encode(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", id, err)
	}
	err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		if !found {
			_, err := tx.Exec(`INSERT INTO system (id, version, doc) VALUES (?, 1, ?)`, id, string(doc))
			return err
		}
		n, err := tx.ExecAffected(`UPDATE system SET version = version + 1, doc = ? WHERE id = ? AND version = ?`, string(doc), id, read)
		if err == nil && n == 0 {
			return errLost
		}
		return err
	})
	switch {
	case sqlitex.IsUnique(err):
		return 0, errLost
	case err != nil:
		return 0, fmt.Errorf("write %s: %w", id, err)
	case !found:
		return 1, nil
	}
	return read + 1, nil
}
