package authn

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
)

func TestRunTokens(t *testing.T) {
	t.Parallel()
	signer := testSigner(t)
	other := mustSigner(t, "another-service-key-for-authn")
	a := NewRunTokens(signer)
	good := signer.RunToken("0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b")
	tests := []struct {
		name       string
		credential string
		wantShape  bool
		want       auth.Principal
	}{
		{name: "a run's token", credential: good, wantShape: true, want: auth.RunPrincipal("0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b")},
		{name: "signed with another key", credential: other.RunToken("0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"), wantShape: true},
		{name: "another run's MAC", credential: "btr_other" + good[strings.LastIndexByte(good, '.'):], wantShape: true},
		{name: "no MAC", credential: "btr_run-1", wantShape: true},
		{name: "over-long", credential: good + strings.Repeat("A", auth.MaxRunTokenLength), wantShape: true},
		{name: "an opaque token", credential: "btu_" + strings.Repeat("a", 43)},
		{name: "nothing", credential: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.wantShape, a.Handles(tt.credential))
			p, err := a.Authenticate(context.Background(), tt.credential)
			if tt.want.Type == "" {
				require.Error(t, err)
				assert.True(t, apperr.HasReason(err, apperr.Unauthenticated), "%v", err)
				assert.Equal(t, auth.Principal{}, p)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, p)
		})
	}
}
