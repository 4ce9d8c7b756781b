package standalone_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// validate-cron through the gateway, on the team path and on v4's: a valid expression
// answers its next five fire times in the zone asked, an invalid one valid false with the
// reason, and an unknown zone or no expression a 400.
func TestIntegrationValidateCron(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"})
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"ops"}`)
	require.Equal(t, http.StatusCreated, code, out)
	for _, base := range []string{"/api/v2/team/ops/schedule/validate-cron", "/api/v2/schedule/validate-cron"} {
		code, out := b.call(t, http.MethodGet, base+"?cron="+url.QueryEscape("0 9 * * MON-FRI")+"&timezone=Europe/Paris", b.token, "")
		require.Equal(t, http.StatusOK, code, out)
		assert.Equal(t, true, out["valid"])
		dates := out["nextDates"].([]any)
		require.Len(t, dates, 5)
		first, err := time.Parse(time.RFC3339, dates[0].(string))
		require.NoError(t, err)
		paris, err := time.LoadLocation("Europe/Paris")
		require.NoError(t, err)
		assert.Equal(t, 9, first.In(paris).Hour())
		assert.NotEqual(t, time.Saturday, first.In(paris).Weekday())

		code, out = b.call(t, http.MethodGet, base+"?cron="+url.QueryEscape("0 0 L * *"), b.token, "")
		require.Equal(t, http.StatusOK, code, out)
		assert.Equal(t, false, out["valid"])
		assert.Contains(t, out["message"], "L, W and #")

		code, out = b.call(t, http.MethodGet, base+"?cron="+url.QueryEscape("0 9 * * *")+"&timezone=Mars/Olympus", b.token, "")
		assert.Equal(t, http.StatusBadRequest, code, out)
		assert.Equal(t, "SCHEDULE_INVALID_REQ", out["reason"])

		code, out = b.call(t, http.MethodGet, base, b.token, "")
		assert.Equal(t, http.StatusBadRequest, code, out)
	}
	code, out = b.call(t, http.MethodGet, "/api/v2/team/ops/schedule/validate-cron?cron=*+*+*+*+*", "", "")
	assert.Equal(t, http.StatusUnauthorized, code, out)
}
