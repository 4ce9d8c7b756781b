package proxy

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRedactedURI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, query, want string
	}{
		{"no query", "/api/v2/callback", "", "/api/v2/callback"},
		{"no token", "/api/v2/callback", "ref=r1&topic=t", "/api/v2/callback?ref=r1&topic=t"},
		{"token", "/api/v2/callback", "ref=r1&access_token=s3cret&topic=t", "/api/v2/callback?ref=r1&access_token=********&topic=t"},
		{"token twice", "/api/v2/event", "access_token=a&access_token=b", "/api/v2/event?access_token=********&access_token=********"},
		{"encoded key", "/api/v2/event", "access%5Ftoken=s3cret", "/api/v2/event?access%5Ftoken=********"},
		{"undecodable key", "/api/v2/event", "%zz=s3cret", "/api/v2/event?%zz=********"},
		{"other case", "/api/v2/event", "ACCESS_TOKEN=s3cret", "/api/v2/event?ACCESS_TOKEN=********"},
		{"key without value", "/api/v2/event", "access_token", "/api/v2/event?access_token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, RedactedURI(tt.path, []byte(tt.query)))
		})
	}
}
