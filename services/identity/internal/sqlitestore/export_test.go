package sqlitestore

import "context"

// Plan answers the query plan of a statement, a line a step.
func (s *Store) Plan(ctx context.Context, query string, args ...any) ([]string, error) {
	return s.db.QueryPlan(ctx, query, args...)
}

// HotQueries are the statements asked for each request or each record, with arguments of
// the right kinds.
func HotQueries() map[string]struct {
	Query string
	Args  []any
} {
	type q = struct {
		Query string
		Args  []any
	}
	return map[string]q{
		"authenticate a token by its hash": {qTokenByHash, []any{"h"}},
		"find a token by id":               {qTokenByID, []any{"t"}},
		"record a token's use":             {qTouchToken, []any{1, "h"}},
		"revoke a token":                   {qRevokeToken, []any{1, "t"}},
		"revoke its descendants":           {qRevokeBelow, []any{1, "h"}},
		"revoke a user's tokens":           {qRevokeOfUser, []any{1, "u", "u", "user:u"}},
		"find a team by name":              {qTeamByName, []any{"alpha"}},
		"find a team by record id":         {qTeamByID, []any{"id"}},
		"find a user's teams":              {qTeamsOf, []any{"u"}},
		"check a team name":                {qTeamTaken, []any{"alpha"}},
		"find a user by id":                {qUserByID, []any{"u"}},
		"find a user by email":             {qUserByEmail, []any{"a@example.com"}},
		"find a parameter":                 {qParam, []any{"p"}},
		"read the settings":                {qSystem, []any{"settings"}},
	}
}
