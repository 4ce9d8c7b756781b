package apperr_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
)

func TestCatalogueCodesAndNamesAreUnique(t *testing.T) {
	t.Parallel()
	codes := map[int]string{}
	names := map[string]bool{}
	for _, r := range apperr.Catalogue {
		if other, ok := codes[r.Code]; ok {
			t.Errorf("code %d used by %s and %s", r.Code, other, r.Name)
		}
		codes[r.Code] = r.Name
		assert.False(t, names[r.Name], "name %s repeated", r.Name)
		names[r.Name] = true
		assert.GreaterOrEqual(t, r.Code, 1000)
		assert.Less(t, r.Code, 2100)
	}
}

func TestContractCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give   apperr.Reason
		code   int
		status int
	}{
		{apperr.QueryInvalidFilters, 1001, http.StatusBadRequest},
		{apperr.TokenInvalidPermission, 1012, http.StatusForbidden},
		{apperr.QuotaExceeded, 1020, http.StatusTooManyRequests},
		{apperr.TeamNotFound, 1104, http.StatusNotFound},
		{apperr.TeamNonUniqueName, 1102, http.StatusUnprocessableEntity},
		{apperr.TeamHasActiveRuns, 1105, http.StatusConflict},
		{apperr.WorkflowNotFound, 1207, http.StatusNotFound},
		{apperr.WorkflowRunInvalidPhase, 1304, http.StatusConflict},
		{apperr.TaskInvalidName, 1403, http.StatusBadRequest},
		{apperr.InstanceLocked, 1902, http.StatusLocked},
		{apperr.IntegrationInvalidSignature, 2001, http.StatusUnauthorized},
		{apperr.UpstreamTimeout, 1016, http.StatusGatewayTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.give.Name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.code, tt.give.Code)
			assert.Equal(t, tt.status, tt.give.Kind.HTTPStatus())
		})
	}
}

func TestErrorsMatchByReason(t *testing.T) {
	t.Parallel()
	sentinel := apperr.New(apperr.TeamNotFound, "Team was not found.")
	err := fmt.Errorf("load: %w", apperr.New(apperr.TeamNotFound, "Team '%s' was not found.", "infra"))

	require.ErrorIs(t, err, sentinel)
	assert.NotErrorIs(t, err, apperr.New(apperr.WorkflowNotFound, "x"))
	assert.Equal(t, apperr.KindNotFound, apperr.KindOf(err))
	assert.True(t, apperr.HasReason(err, apperr.TeamNotFound))
	assert.Equal(t, apperr.KindInternal, apperr.KindOf(errors.New("boom")))

	cause := errors.New("disk full")
	wrapped := apperr.Wrap(apperr.Internal, cause, "could not save")
	assert.ErrorIs(t, wrapped, cause)
	assert.Contains(t, wrapped.Error(), "disk full")
}
