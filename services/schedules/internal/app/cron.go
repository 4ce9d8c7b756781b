// Package app holds the schedules service's use cases.
package app

import (
	"errors"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/schedules/internal/domain"
)

// CronCheck is what checking an expression answers: whether it is valid, why not, and
// its next fire times.
type CronCheck struct {
	Valid     bool
	Message   string
	NextDates []time.Time
}

// NextDates is how many next fire times a check answers.
const NextDates = 5

// CheckCron checks expr of the cron dialect and answers its next fire times after now in
// zone (UTC when empty). An expression outside the dialect is answered as not valid, not
// refused; a zone that is not an IANA time zone is refused.
func CheckCron(expr, zone string, now time.Time) (CronCheck, error) {
	if expr == "" {
		return CronCheck{}, apperr.New(apperr.QueryInvalidFilters, "Give the expression to check as the query parameter cron.")
	}
	loc, err := domain.LoadZone(zone)
	if err != nil {
		return CronCheck{}, apperr.New(apperr.ScheduleInvalidReq, "The timezone %q is not an IANA time zone, such as Europe/Paris.", truncate(zone))
	}
	c, err := domain.ParseCron(expr, loc)
	if errors.Is(err, domain.ErrInvalidCron) {
		return CronCheck{Message: err.Error()}, nil
	}
	if err != nil {
		return CronCheck{}, err
	}
	out := CronCheck{Valid: true}
	for t := c.Next(now); !t.IsZero() && len(out.NextDates) < NextDates; t = c.Next(t) {
		out.NextDates = append(out.NextDates, t)
	}
	return out, nil
}

// truncate shortens a value echoed in a message.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
