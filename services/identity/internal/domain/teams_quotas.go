package domain

import (
	"fmt"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
)

// TeamQuotas are a team's limits. Storage limits are in GiB, durations in minutes.
type TeamQuotas struct {
	MaxWorkflowCount       int
	MaxWorkflowRunMonthly  int
	MaxWorkflowStorage     int
	MaxWorkflowRunStorage  int
	MaxWorkflowRunDuration int
	MaxConcurrentRuns      int
}

// DefaultTeamQuotas are the seeded defaults, used until settings provide others.
var DefaultTeamQuotas = TeamQuotas{
	MaxWorkflowCount:       DefaultMaxWorkflowCount,
	MaxWorkflowRunMonthly:  DefaultMaxWorkflowRunMonthly,
	MaxWorkflowStorage:     DefaultMaxWorkflowStorage,
	MaxWorkflowRunStorage:  DefaultMaxWorkflowRunStorage,
	MaxWorkflowRunDuration: DefaultMaxWorkflowRunDuration,
	MaxConcurrentRuns:      DefaultMaxConcurrentRuns,
}

// QuotasFrom reads the default team quotas from the settings, each falling back to its
// seeded value.
func QuotasFrom(s Settings) TeamQuotas {
	get := func(key string, def int) int { return int(s.Int(SettingQuotas+"."+key, int64(def))) }
	d := DefaultTeamQuotas
	return TeamQuotas{
		MaxWorkflowCount:       get("maxWorkflowCount", d.MaxWorkflowCount),
		MaxWorkflowRunMonthly:  get("maxWorkflowRunMonthly", d.MaxWorkflowRunMonthly),
		MaxWorkflowStorage:     get("maxWorkflowStorage", d.MaxWorkflowStorage),
		MaxWorkflowRunStorage:  get("maxWorkflowRunStorage", d.MaxWorkflowRunStorage),
		MaxWorkflowRunDuration: get("maxWorkflowRunDuration", d.MaxWorkflowRunDuration),
		MaxConcurrentRuns:      get("maxConcurrentRuns", d.MaxConcurrentRuns),
	}
}

// TeamQuotaOverrides are limits set for one team; nil fields take the default.
type TeamQuotaOverrides struct {
	MaxWorkflowCount       *int
	MaxWorkflowRunMonthly  *int
	MaxWorkflowStorage     *int
	MaxWorkflowRunStorage  *int
	MaxWorkflowRunDuration *int
	MaxConcurrentRuns      *int
}

// fields pairs each override with its name, in the contract's order.
func (o *TeamQuotaOverrides) fields() []struct {
	name string
	ptr  **int
} {
	return []struct {
		name string
		ptr  **int
	}{
		{"maxWorkflowCount", &o.MaxWorkflowCount},
		{"maxWorkflowRunMonthly", &o.MaxWorkflowRunMonthly},
		{"maxWorkflowStorage", &o.MaxWorkflowStorage},
		{"maxWorkflowRunStorage", &o.MaxWorkflowRunStorage},
		{"maxWorkflowRunDuration", &o.MaxWorkflowRunDuration},
		{"maxConcurrentRuns", &o.MaxConcurrentRuns},
	}
}

// Over returns the limits in force: o's overrides over def.
func (o TeamQuotaOverrides) Over(def TeamQuotas) TeamQuotas {
	pick := func(v *int, d int) int {
		if v != nil {
			return *v
		}
		return d
	}
	return TeamQuotas{
		MaxWorkflowCount:       pick(o.MaxWorkflowCount, def.MaxWorkflowCount),
		MaxWorkflowRunMonthly:  pick(o.MaxWorkflowRunMonthly, def.MaxWorkflowRunMonthly),
		MaxWorkflowStorage:     pick(o.MaxWorkflowStorage, def.MaxWorkflowStorage),
		MaxWorkflowRunStorage:  pick(o.MaxWorkflowRunStorage, def.MaxWorkflowRunStorage),
		MaxWorkflowRunDuration: pick(o.MaxWorkflowRunDuration, def.MaxWorkflowRunDuration),
		MaxConcurrentRuns:      pick(o.MaxConcurrentRuns, def.MaxConcurrentRuns),
	}
}

// Merge returns o with ch's non-nil fields overriding it, unvalidated.
func (o TeamQuotaOverrides) Merge(ch TeamQuotaOverrides) TeamQuotaOverrides {
	out := o.clone()
	src := ch.fields()
	for i, f := range out.fields() {
		if v := *src[i].ptr; v != nil {
			n := *v
			*f.ptr = &n
		}
	}
	return out
}

// IsZero reports whether o overrides nothing.
func (o TeamQuotaOverrides) IsZero() bool { return o == TeamQuotaOverrides{} }

func (o TeamQuotaOverrides) clone() TeamQuotaOverrides {
	c := o
	for _, f := range c.fields() {
		if *f.ptr != nil {
			v := **f.ptr
			*f.ptr = &v
		}
	}
	return c
}

// apply sets ch's non-nil fields as overrides; limits cannot be negative.
func (o *TeamQuotaOverrides) apply(ch TeamQuotaOverrides) error {
	src := ch.fields()
	for i, f := range o.fields() {
		v := *src[i].ptr
		if v == nil {
			continue
		}
		if *v < 0 {
			return apperr.Invalid(apperr.TeamInvalidReq, fmt.Sprintf("Quota %s cannot be negative.", f.name),
				apperr.FieldError{Field: "quotas." + f.name, Message: "must be 0 or more"})
		}
		n := *v
		*f.ptr = &n
	}
	return nil
}

// TeamQuotaUsage is what a team uses of its quotas. The services owning each counter
// (workflows, runs) enforce them and are asked for them when a team is read.
type TeamQuotaUsage struct {
	CurrentWorkflowCount     int
	CurrentRuns              int
	CurrentConcurrentRuns    int
	CurrentRunTotalDuration  int64
	CurrentRunMedianDuration int64
	// MonthlyResetDate is when the monthly run count starts again: the first of next month, UTC.
	MonthlyResetDate time.Time
}

// NewTeamQuotaUsage is the usage of a team nothing has reported on yet, as of now.
func NewTeamQuotaUsage(now time.Time) TeamQuotaUsage {
	now = now.UTC()
	return TeamQuotaUsage{MonthlyResetDate: time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)}
}
