package sqlitestore

import (
	"context"

	"github.com/baton-flow/baton/libs/sqlitex/sqlitextest"
)

// Plan answers the query plan of a statement, a line a step.
func (s *Store) Plan(ctx context.Context, query string, args ...any) ([]string, error) {
	return s.db.QueryPlan(ctx, query, args...)
}

// HotQueries are the statements asked for each request or each record, with arguments of
// the right kinds.
func HotQueries() map[string]sqlitextest.Statement {
	type q = sqlitextest.Statement
	return map[string]q{
		"authenticate a token by its hash": {Query: qTokenByHash, Args: []any{"h"}},
		"find a token by id":               {Query: qTokenByID, Args: []any{"t"}},
		"record a token's use":             {Query: qTouchToken, Args: []any{1, "h"}},
		"revoke a token":                   {Query: qRevokeToken, Args: []any{1, "t"}},
		"revoke its descendants":           {Query: qRevokeBelow, Args: []any{1, "h"}},
		"revoke a user's tokens":           {Query: qRevokeOfUser, Args: []any{1, "u", "u", "user:u"}},
		"find a team by name":              {Query: qTeamByName, Args: []any{"alpha"}},
		"find a team by record id":         {Query: qTeamByID, Args: []any{"id"}},
		"find a user's teams":              {Query: qTeamsOf, Args: []any{"u"}},
		"check a team name":                {Query: qTeamTaken, Args: []any{"alpha"}},
		"find a user by id":                {Query: qUserByID, Args: []any{"u"}},
		"find a user by email":             {Query: qUserByEmail, Args: []any{"a@example.com"}},
		"find a parameter":                 {Query: qParam, Args: []any{"p"}},
		"read the settings":                {Query: qSystem, Args: []any{"settings"}},
	}
}
