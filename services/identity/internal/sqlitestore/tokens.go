package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// The token's row: expires, revoked and last_used hold ExpirationDate, RevokedDate and
// LastUsed (the last two change without the doc being rewritten).
const (
	tokenColumns  = `expires, revoked, last_used, doc`
	qTokenByHash  = `SELECT ` + tokenColumns + ` FROM tokens WHERE hash = ?`
	qTokenByID    = `SELECT ` + tokenColumns + ` FROM tokens WHERE id = ?`
	qTouchToken   = `UPDATE tokens SET last_used = ? WHERE hash = ?`
	qRevokeToken  = `UPDATE tokens SET revoked = ? WHERE id = ? AND revoked IS NULL`
	qRevokeBelow  = `UPDATE tokens SET revoked = ? WHERE revoked IS NULL AND hash IN (SELECT token FROM token_ancestors WHERE ancestor = ?)`
	qRevokeOfUser = `UPDATE tokens SET revoked = ? WHERE revoked IS NULL AND (user_id = ? OR creator_user_id = ? OR creator = ?)`
)

// CreateToken stores t.
func (s *Store) CreateToken(ctx context.Context, t domain.Token) error {
	expires, revoked, lastUsed := optMillis(t.ExpirationDate), optMillis(t.RevokedDate), optMillis(t.LastUsed)
	t.ExpirationDate, t.RevokedDate, t.LastUsed = nil, nil, nil
	doc, err := encode(t)
	if err != nil {
		return fmt.Errorf("token %s: %w", t.ID, err)
	}
	err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		if _, err := tx.Exec(`INSERT INTO tokens (hash, id, type, name, principal, team, user_id, creator, creator_user_id, created, expires, revoked, last_used, doc)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			t.Hash, t.ID, string(t.Type), t.Name, t.Principal, t.Team, t.UserID, t.Creator, t.CreatorUserID,
			millis(t.CreationDate), expires, revoked, lastUsed, string(doc)); err != nil {
			return err
		}
		for _, a := range t.Ancestors {
			if _, err := tx.Exec(`INSERT OR IGNORE INTO token_ancestors (ancestor, token) VALUES (?, ?)`, a, t.Hash); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("insert token %s: %w", t.ID, err)
	}
	return nil
}

func scanToken(row scanner) (domain.Token, error) {
	var expires, revoked, lastUsed sql.NullInt64
	var doc []byte
	if err := row.Scan(&expires, &revoked, &lastUsed, &doc); err != nil {
		return domain.Token{}, err
	}
	var t domain.Token
	if err := decode(doc, &t); err != nil {
		return domain.Token{}, err
	}
	t.CreationDate = t.CreationDate.UTC()
	t.ExpirationDate, t.RevokedDate, t.LastUsed = optTime(expires), optTime(revoked), optTime(lastUsed)
	return t, nil
}

// optTime is an optional date as stored.
func optTime(ms sql.NullInt64) *time.Time {
	if !ms.Valid {
		return nil
	}
	at := fromMillis(ms.Int64)
	return &at
}

// FindTokenByHash returns the token whose secret hashes to hash: a lookup by the primary
// key, asked for each request the gateway authenticates and has not cached.
func (s *Store) FindTokenByHash(ctx context.Context, hash string) (domain.Token, error) {
	t, err := scanToken(s.db.QueryRow(ctx, qTokenByHash, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return domain.Token{}, domain.ErrTokenNotFound
	}
	if err != nil {
		// The hash identifies a credential: it stays out of errors, which get logged.
		return domain.Token{}, fmt.Errorf("find token by hash: %w", err)
	}
	return t, nil
}

// FindTokenByID returns the token with public id.
func (s *Store) FindTokenByID(ctx context.Context, id string) (domain.Token, error) {
	t, err := scanToken(s.db.QueryRow(ctx, qTokenByID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return domain.Token{}, domain.TokenNotFound(id)
	}
	if err != nil {
		return domain.Token{}, fmt.Errorf("find token %s: %w", id, err)
	}
	return t, nil
}

// FindTokensByHashes returns those of the tokens with these hashes that exist.
func (s *Store) FindTokensByHashes(ctx context.Context, hashes []string) ([]domain.Token, error) {
	out := make([]domain.Token, 0, len(hashes))
	if len(hashes) == 0 {
		return out, nil
	}
	args := make([]any, len(hashes))
	for i, h := range hashes {
		args[i] = h
	}
	rows, err := s.db.Query(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE hash IN (`+placeholders(len(hashes))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("find tokens by hash: %w", err)
	}
	tokens, err := scanTokens(rows)
	if err != nil {
		return nil, err
	}
	return append(out, tokens...), nil
}

func scanTokens(rows *sql.Rows) ([]domain.Token, error) { return scanAll(rows, scanToken, "tokens") }

var tokenSortColumns = map[string]string{"creationDate": "created", "name": "name"}

// FindTokens returns one page of the tokens f selects, and how many it selects in all.
func (s *Store) FindTokens(ctx context.Context, f domain.TokenFilter, p page.Request) ([]domain.Token, int64, error) {
	var conds []string
	var args []any
	if a := f.Audience; !a.All {
		var or []string
		if a.Creator != "" {
			or = append(or, "creator = ?")
			args = append(args, a.Creator)
		}
		if a.UserID != "" {
			or = append(or, "user_id = ?")
			args = append(args, a.UserID)
		}
		if len(a.Teams) > 0 {
			or = append(or, "team IN ("+placeholders(len(a.Teams))+")")
			for _, t := range a.Teams {
				args = append(args, t)
			}
		}
		if len(or) == 0 {
			return nil, 0, nil
		}
		conds = append(conds, "("+strings.Join(or, " OR ")+")")
	}
	if len(f.Types) > 0 {
		conds = append(conds, "type IN ("+placeholders(len(f.Types))+")")
		for _, t := range f.Types {
			args = append(args, string(t))
		}
	}
	if len(f.Principals) > 0 {
		conds = append(conds, "principal IN ("+placeholders(len(f.Principals))+")")
		for _, p := range f.Principals {
			args = append(args, p)
		}
	}
	if f.From != nil {
		conds = append(conds, "created >= ?")
		args = append(args, millis(*f.From))
	}
	if f.To != nil {
		conds = append(conds, "created <= ?")
		args = append(args, millis(*f.To))
	}
	col, ok := tokenSortColumns[p.Sort]
	if !ok {
		col = "created"
	}
	return search[domain.Token]{table: "tokens", cols: tokenColumns, sort: col, conds: conds, args: args, scan: scanTokens}.run(ctx, s.db, p)
}

// RevokeToken marks the token with id revoked at at unless it already is, and every live
// token made with it however far removed (each lists all its ancestors), in one
// transaction; it returns the token.
func (s *Store) RevokeToken(ctx context.Context, id string, at time.Time) (domain.Token, error) {
	t, err := s.FindTokenByID(ctx, id)
	if err != nil {
		return domain.Token{}, err
	}
	err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		if _, err := tx.Exec(qRevokeToken, millis(at), id); err != nil {
			return err
		}
		_, err := tx.Exec(qRevokeBelow, millis(at), t.Hash)
		return err
	})
	if err != nil {
		return domain.Token{}, fmt.Errorf("revoke token %s: %w", id, err)
	}
	return s.FindTokenByID(ctx, id)
}

// RevokeUserTokens marks every live token of the user revoked at at: those acting as the
// user and those the user made, directly or through other tokens.
func (s *Store) RevokeUserTokens(ctx context.Context, userID string, at time.Time) error {
	err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(qRevokeOfUser, millis(at), userID, userID, "user:"+userID)
		return err
	})
	if err != nil {
		return fmt.Errorf("revoke tokens of user %s: %w", userID, err)
	}
	return nil
}

// TouchToken records that the token whose secret hashes to hash was used at at.
func (s *Store) TouchToken(ctx context.Context, hash string, at time.Time) error {
	err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(qTouchToken, millis(at), hash)
		return err
	})
	if err != nil {
		return fmt.Errorf("touch token: %w", err)
	}
	return nil
}
