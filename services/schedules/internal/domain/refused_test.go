package domain

import (
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScheduleNormalizeRefuses covers what a schedule may not hold: label keys outside the
// one rule every resource follows, and an expression no date matches.
func TestScheduleNormalizeRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		cron       string
		labels     map[string]string
		wantField  string
		neverFires bool
	}{
		{"a dotted key is a key", "0 2 * * *", map[string]string{"app.kubernetes.io/name": "x"}, "", false},
		{"a $ key", "0 2 * * *", map[string]string{"$where": "1"}, "labels", false},
		{"a control character", "0 2 * * *", map[string]string{"a\x01b": "1"}, "labels", false},
		{"an empty part in a prefix", "0 2 * * *", map[string]string{"a..b/c": "1"}, "labels", false},
		{"February 30th", "0 0 30 2 *", nil, "cronSchedule", true},
		{"April 31st, with seconds", "0 0 0 31 4 *", nil, "cronSchedule", true},
		{"February 29th fires in leap years", "0 0 29 2 *", nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := Schedule{Name: "nightly", Workflow: "build", Cron: tt.cron, Timezone: "Europe/Paris", Labels: tt.labels}
			err := s.Normalize()
			if tt.wantField == "" {
				require.NoError(t, err)
				return
			}
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.wantField, fe.Field)
			assert.Equal(t, tt.neverFires, errors.Is(err, ErrNeverFires), "%v", err)
			for k := range tt.labels {
				assert.Contains(t, fe.Message, strconv.Quote(k), "the message names the key")
			}
		})
	}
}
