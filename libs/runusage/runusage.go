// Package runusage is what is left of the runs service's run-usage contract, which now
// lives in libs/runsapi (runsapi.Usage, runsapi.MonthStart, runsapi.Client.Usage): the
// names the runs service still uses until it moves to runsapi. Then this package goes.
//
// Deprecated: use libs/runsapi.
package runusage

import (
	"time"

	"github.com/baton-flow/baton/libs/runsapi"
)

// Usage is runsapi.Usage.
//
// Deprecated: use runsapi.Usage.
type Usage = runsapi.Usage

// MonthStart is runsapi.MonthStart.
//
// Deprecated: use runsapi.MonthStart.
func MonthStart(t time.Time) time.Time { return runsapi.MonthStart(t) }
