package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

const (
	qUserByID    = `SELECT version, doc FROM users WHERE id = ?`
	qUserByEmail = `SELECT version, doc FROM users WHERE email = ?`
)

// CreateUser stores a new user; a taken email fails matching domain.ErrUserEmailTaken.
func (s *Store) CreateUser(ctx context.Context, u domain.User) error {
	doc, err := encode(u)
	if err != nil {
		return fmt.Errorf("user %s: %w", u.Email, err)
	}
	err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(`INSERT INTO users (id, email, name, status, created, version, doc) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			u.ID, u.Email, u.Name, string(u.Status), millis(u.CreationDate), u.Version, string(doc))
		return err
	})
	if sqlitex.IsUnique(err) {
		return domain.UserEmailTaken(u.Email)
	}
	if err != nil {
		return fmt.Errorf("insert user %s: %w", u.Email, err)
	}
	return nil
}

func scanUser(row scanner) (domain.User, error) {
	var version int64
	var doc []byte
	if err := row.Scan(&version, &doc); err != nil {
		return domain.User{}, err
	}
	var u domain.User
	if err := decode(doc, &u); err != nil {
		return domain.User{}, err
	}
	u.Version = version
	u.CreationDate = u.CreationDate.UTC()
	if u.LastLoginDate != nil {
		at := u.LastLoginDate.UTC()
		u.LastLoginDate = &at
	}
	return u, nil
}

func (s *Store) findUser(ctx context.Context, query, arg, ref string) (domain.User, error) {
	u, err := scanUser(s.db.QueryRow(ctx, query, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return domain.User{}, domain.UserNotFound(ref)
	}
	if err != nil {
		return domain.User{}, fmt.Errorf("find user %s: %w", ref, err)
	}
	return u, nil
}

// FindUserByID returns the user with id, deleted ones included.
func (s *Store) FindUserByID(ctx context.Context, id string) (domain.User, error) {
	return s.findUser(ctx, qUserByID, id, id)
}

// FindUserByEmail returns the user with email (compared lower-cased).
func (s *Store) FindUserByEmail(ctx context.Context, email string) (domain.User, error) {
	e, err := domain.NormalizeEmail(email)
	if err != nil {
		return domain.User{}, domain.UserNotFound(email)
	}
	return s.findUser(ctx, qUserByEmail, e, email)
}

// FindUsersByIDs returns the users with these ids that exist, in no particular order.
func (s *Store) FindUsersByIDs(ctx context.Context, ids []string) ([]domain.User, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.db.Query(ctx, `SELECT version, doc FROM users WHERE id IN (`+placeholders(len(ids))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("find users: %w", err)
	}
	return scanUsers(rows)
}

func scanUsers(rows *sql.Rows) ([]domain.User, error) { return scanAll(rows, scanUser, "users") }

// UpdateUser applies fn and writes the result conditionally on the version read; an email
// another user holds fails matching domain.ErrUserEmailTaken.
func (s *Store) UpdateUser(ctx context.Context, id string, fn func(*domain.User) error) (domain.User, error) {
	for range maxAttempts {
		u, err := s.FindUserByID(ctx, id)
		if err != nil {
			return domain.User{}, err
		}
		created, read := u.CreationDate, u.Version
		if err := fn(&u); err != nil {
			return domain.User{}, err
		}
		u.ID, u.CreationDate, u.Version = id, created, read
		doc, err := encode(u)
		if err != nil {
			return domain.User{}, fmt.Errorf("user %s: %w", id, err)
		}
		err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
			n, err := tx.ExecAffected(`UPDATE users SET email = ?, name = ?, status = ?, version = version + 1, doc = ? WHERE id = ? AND version = ?`,
				u.Email, u.Name, string(u.Status), string(doc), id, read)
			if err == nil && n == 0 {
				return errLost
			}
			return err
		})
		switch {
		case errors.Is(err, errLost):
			continue
		case sqlitex.IsUnique(err):
			return domain.User{}, domain.UserEmailTaken(u.Email)
		case err != nil:
			return domain.User{}, fmt.Errorf("update user %s: %w", id, err)
		}
		u.Version = read + 1
		return u, nil
	}
	return domain.User{}, busy(fmt.Sprintf("User '%s'", id))
}

var userSortColumns = map[string]string{"name": "name", "creationDate": "created", "status": "status"}

// FindUsers returns one page of the users matching f, and how many match in all.
func (s *Store) FindUsers(ctx context.Context, f domain.UserFilter, p page.Request) ([]domain.User, int64, error) {
	var conds []string
	var args []any
	if f.IDs != nil {
		if len(f.IDs) == 0 {
			conds = append(conds, "0")
		} else {
			conds = append(conds, "id IN ("+placeholders(len(f.IDs))+")")
			for _, id := range f.IDs {
				args = append(args, id)
			}
		}
	}
	if len(f.Statuses) > 0 {
		conds = append(conds, "status IN ("+placeholders(len(f.Statuses))+")")
		for _, st := range f.Statuses {
			args = append(args, string(st))
		}
	}
	if len(f.Labels) > 0 {
		c, a := labelsMatch(f.Labels)
		conds = append(conds, c)
		args = append(args, a...)
	}
	col, ok := userSortColumns[p.Sort]
	if !ok {
		col = "name"
	}
	return search[domain.User]{table: "users", cols: "version, doc", sort: col, conds: conds, args: args, scan: scanUsers}.run(ctx, s.db, p)
}
