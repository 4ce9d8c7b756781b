package domain

import "github.com/baton-flow/baton/libs/apperr"

// Sentinels for errors.Is; they match any error of their reason, whatever its message.
var (
	ErrTeamNotFound  = apperr.New(apperr.TeamNotFound, "Team was not found.")
	ErrTeamNameTaken = apperr.New(apperr.TeamNonUniqueName, "The team name is already taken.")
)

// TeamNotFound is the error for a team that does not exist.
func TeamNotFound(name string) error {
	return apperr.New(apperr.TeamNotFound, "Team '%s' was not found.", name)
}

// TeamNameTaken is the error for a name another team holds.
func TeamNameTaken(name string) error {
	return apperr.New(apperr.TeamNonUniqueName, "The team name '%s' is already taken.", name)
}
