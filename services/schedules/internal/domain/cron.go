// Package domain holds the schedules service's rules: the cron dialect, when a schedule
// fires, and what a schedule is.
package domain

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	// The zone database goes with the binary: a container image or a bare machine may
	// have none, and a schedule's zone must not depend on the host.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
)

// The cron dialect is robfig/cron/v3's, one parser for validation, firing, next dates and
// calendars alike: 5 fields, or 6 with seconds first; day of week 0–6 from Sunday or names,
// months 1–12 or names; ranges, lists, steps; `?` as `*`; `@yearly` … `@hourly` and
// `@every <duration>`. `L`, `W` and `#` are not supported, nor a zone inside the
// expression (`TZ=`, `CRON_TZ=`): a schedule's zone is its own field.
var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// quartzOnly finds the day fields of other dialects (Quartz's last, nearest weekday, n-th),
// to say so rather than fail on a number.
var quartzOnly = regexp.MustCompile(`#|(^|[\s,/-])(L|LW|\d+W|\d+L|L-\d+)($|[\s,/-])`)

// MaxCronLength bounds an expression's length.
const MaxCronLength = 256

// MinEvery is the shortest `@every` interval.
const MinEvery = time.Second

// ErrInvalidCron marks an expression outside the dialect.
var ErrInvalidCron = errors.New("invalid cron expression")

// ErrNeverFires marks an expression of the dialect that no date matches, such as
// `0 0 30 2 *` (February 30th): it parses, but a schedule of it would never fire.
var ErrNeverFires = errors.New("the expression never fires: no date matches it")

// neverFiresFrom is where ParseCron looks for a first fire. The dialect has no year field,
// so an expression that fires at all fires within any four years, inside the five the
// parser searches; the answer does not depend on the day it is asked.
var neverFiresFrom = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// ErrInvalidZone marks a zone that is not an IANA time zone.
var ErrInvalidZone = errors.New("invalid time zone")

// Cron is an expression of the dialect in a time zone.
//
// Wall-clock times that a daylight-saving change skips or repeats are taken as people
// expect of a clock: a fire whose time is skipped (02:30 when clocks go from 02:00 to
// 03:00) happens at the first instant after the change (03:00), not skipped with it; a fire
// whose time comes twice (01:30 when clocks go from 02:00 back to 01:00) happens once, the
// first time, unless the expression fires every hour of the day (`*/15 * * * *`), which
// keeps firing through both passes as the real time goes on. `@every` counts real time.
type Cron struct {
	expr string
	loc  *time.Location
	spec *cron.SpecSchedule // nil for @every
	all  bool               // spec fires at every hour of the day
	each *cron.ConstantDelaySchedule
}

// LoadZone answers the IANA time zone name; empty is UTC.
func LoadZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	// Local is this process's zone, not one a schedule may name. (LoadLocation refuses
	// names that climb out of the zone database.)
	if name == "Local" || len(name) > 64 || strings.ContainsRune(name, 0) {
		return nil, fmt.Errorf("%w: %q", ErrInvalidZone, name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %q", ErrInvalidZone, name)
	}
	return loc, nil
}

// ParseCron parses expr of the dialect, to fire in loc.
func ParseCron(expr string, loc *time.Location) (Cron, error) {
	expr = strings.TrimSpace(expr)
	switch {
	case expr == "":
		return Cron{}, fmt.Errorf("%w: the expression is empty", ErrInvalidCron)
	case len(expr) > MaxCronLength:
		return Cron{}, fmt.Errorf("%w: the expression is longer than %d characters", ErrInvalidCron, MaxCronLength)
	case strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ="):
		return Cron{}, fmt.Errorf("%w: a schedule's time zone is its timezone field, not part of the expression", ErrInvalidCron)
	case quartzOnly.MatchString(expr):
		return Cron{}, fmt.Errorf("%w: L, W and # are not supported", ErrInvalidCron)
	}
	s, err := parser.Parse(expr)
	if err != nil {
		return Cron{}, fmt.Errorf("%w: %s", ErrInvalidCron, err.Error())
	}
	c := Cron{expr: expr, loc: loc}
	switch s := s.(type) {
	case *cron.SpecSchedule:
		c.spec = s
		c.all = s.Hour&(1<<24-1) == 1<<24-1
		if s.Next(neverFiresFrom).IsZero() {
			return Cron{}, fmt.Errorf("%w: %w", ErrInvalidCron, ErrNeverFires)
		}
	case cron.ConstantDelaySchedule:
		if d, ok := strings.CutPrefix(expr, "@every "); ok {
			if every, err := time.ParseDuration(strings.TrimSpace(d)); err != nil || every < MinEvery {
				return Cron{}, fmt.Errorf("%w: @every needs a duration of %s or more", ErrInvalidCron, MinEvery)
			}
		}
		c.each = &s
	default:
		return Cron{}, fmt.Errorf("%w: unsupported expression", ErrInvalidCron)
	}
	return c, nil
}

// String answers the expression as parsed.
func (c Cron) String() string { return c.expr }

// Next answers the first fire strictly after t, in c's zone; zero when there is none
// within the parser's five years (ParseCron refuses expressions that never fire).
func (c Cron) Next(t time.Time) time.Time {
	if c.each != nil {
		return c.each.Next(t).In(c.loc)
	}
	t = t.In(c.loc)
	for {
		n := c.spec.Next(t)
		if skipped := c.skipped(t, n); !skipped.IsZero() {
			return skipped
		}
		if n.IsZero() || c.all || !repeated(n) {
			return n
		}
		t = n // the second pass of a repeated wall time: fired the first time
	}
}

// Between answers the fires in (from, to], at most max of them.
func (c Cron) Between(from, to time.Time, max int) []time.Time {
	var out []time.Time
	for t := c.Next(from); !t.IsZero() && !t.After(to) && len(out) < max; t = c.Next(t) {
		out = append(out, t)
	}
	return out
}

// repeated reports whether t's wall-clock time came once already, before a change that
// set clocks back (by at most two hours).
func repeated(t time.Time) bool {
	for _, back := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour} {
		if sameWall(t.Add(-back), t) {
			return true
		}
	}
	return false
}

func sameWall(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd && a.Hour() == b.Hour() && a.Minute() == b.Minute() && a.Second() == b.Second()
}

// skipped answers the first instant after a change that set clocks forward, in (t, n),
// when the wall-clock times it skipped held a fire of c; zero otherwise.
func (c Cron) skipped(t, n time.Time) time.Time {
	end := n
	if end.IsZero() || end.Sub(t) > 366*24*time.Hour {
		end = t.Add(366 * 24 * time.Hour)
	}
	for _, g := range forwardChanges(t, end, c.loc) {
		// The skipped wall times, read as times of a zone without changes.
		_, before := g.Add(-time.Nanosecond).Zone()
		_, after := g.Zone()
		wall := time.Date(g.Year(), g.Month(), g.Day(), g.Hour(), g.Minute(), g.Second(), g.Nanosecond(), time.UTC)
		from := wall.Add(-time.Duration(after-before) * time.Second)
		if f := c.spec.Next(from.Add(-time.Second)); !f.IsZero() && f.Before(wall) && g.After(t) {
			return g
		}
	}
	return time.Time{}
}

// forwardChanges answers the instants in (from, to] at which loc sets its clocks forward:
// the first instant of the new offset.
func forwardChanges(from, to time.Time, loc *time.Location) []time.Time {
	var out []time.Time
	_, off := from.In(loc).Zone()
	for day := from; day.Before(to); {
		next := day.Add(24 * time.Hour)
		if next.After(to) {
			next = to
		}
		if _, o := next.In(loc).Zone(); o != off {
			// One change a day at most: find its instant.
			lo, hi := day, next
			for hi.Sub(lo) > time.Second {
				mid := lo.Add(hi.Sub(lo) / 2)
				if _, m := mid.In(loc).Zone(); m == off {
					lo = mid
				} else {
					hi = mid
				}
			}
			if o > off {
				out = append(out, hi.Truncate(time.Second).In(loc))
			}
			off = o
		}
		day = next
	}
	return out
}
