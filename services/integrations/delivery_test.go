package integrations

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDeliveryFromEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		give    map[string]string
		want    DeliveryConfig
		wantErr string
	}{
		{name: "defaults", give: nil, want: DeliveryConfig{}},
		{name: "set", give: map[string]string{"BATON_SINK_TIMEOUT": "3s", "BATON_SINK_RETRY_MAX": "1m", "BATON_SINK_GIVE_UP_AFTER": "2h"},
			want: func() DeliveryConfig {
				var c DeliveryConfig
				c.SendTimeout, c.Retry.Max, c.Retry.GiveUpAfter = 3*time.Second, time.Minute, 2*time.Hour
				return c
			}()},
		{name: "not a duration", give: map[string]string{"BATON_SINK_TIMEOUT": "soon"}, wantErr: "BATON_SINK_TIMEOUT"},
		{name: "not positive", give: map[string]string{"BATON_SINK_GIVE_UP_AFTER": "-1h"}, wantErr: "BATON_SINK_GIVE_UP_AFTER"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := deliveryFromEnv(func(k string) string { return tt.give[k] })
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestSinksConsumerGroup(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "baton-integrations-sinks", sinksConsumer("baton-integrations"))
}
