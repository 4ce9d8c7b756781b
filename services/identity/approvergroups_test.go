package identity_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/identityapi"
)

// A team's approver groups are the runs service's question (who may decide an approval),
// answered in the contract's type with the approvers' user ids, and nobody else's.
func TestApproverGroupsAreForServices(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	code, team := sendAs(t, w.f, w.owner, http.MethodPatch, "/api/v2/team/infra", `{"approverGroups":[
		{"name":"leads","approvers":["editor@example.com",{"id":"`+w.reader.ID+`"}]},
		{"name":"ops","approvers":[{"email":"owner@example.com"}]}]}`)
	require.Equal(t, http.StatusOK, code, team)
	ids := map[string]string{}
	for _, g := range team["approverGroups"].([]any) {
		ids[g.(map[string]any)["name"].(string)] = g.(map[string]any)["id"].(string)
	}
	require.Len(t, ids, 2)
	code, out := sendAs(t, w.f, w.owner, http.MethodPost, "/api/v2/team", `{"name":"quiet"}`)
	require.Equal(t, http.StatusCreated, code, out)

	owner := w.owner
	owner.Teams = map[string]string{"infra": auth.RoleOwner}
	tests := []struct {
		name       string
		who        *auth.Principal
		team       string
		wantCode   int
		wantReason string
		want       identityapi.ApproverGroups
	}{
		{name: "a team with two groups", who: &runsService, team: "infra", wantCode: http.StatusOK,
			want: identityapi.ApproverGroups{Team: "infra", Groups: []identityapi.ApproverGroup{
				{ID: ids["leads"], Name: "leads", Approvers: []string{w.editor.ID, w.reader.ID}},
				{ID: ids["ops"], Name: "ops", Approvers: []string{w.owner.ID}},
			}}},
		{name: "a team without groups", who: &runsService, team: "quiet", wantCode: http.StatusOK,
			want: identityapi.ApproverGroups{Team: "quiet", Groups: []identityapi.ApproverGroup{}}},
		{name: "an unknown team", who: &runsService, team: "nope", wantCode: http.StatusNotFound, wantReason: "TEAM_NOT_FOUND"},
		{name: "an admin", who: &admin, team: "infra", wantCode: http.StatusForbidden, wantReason: "PERMISSION_DENIED"},
		{name: "the team's owner", who: &owner, team: "infra", wantCode: http.StatusForbidden, wantReason: "PERMISSION_DENIED"},
		{name: "a team token", who: &w.token, team: "infra", wantCode: http.StatusForbidden, wantReason: "PERMISSION_DENIED"},
		{name: "a run's callback token", who: ptrTo(auth.RunPrincipal("r1")), team: "infra", wantCode: http.StatusForbidden,
			wantReason: "PERMISSION_DENIED"},
		{name: "anonymous", who: &anonymous, team: "infra", wantCode: http.StatusUnauthorized, wantReason: "UNAUTHENTICATED"},
		{name: "unsigned", team: "infra", wantCode: http.StatusUnauthorized, wantReason: "UNAUTHENTICATED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tokenCall(t, w.f, tt.who, http.MethodGet, identityapi.ApproverGroupsPath(tt.team), "")
			require.Equal(t, tt.wantCode, r.code, r.raw)
			if tt.wantCode != http.StatusOK {
				assert.Equal(t, tt.wantReason, r.body["reason"])
				assert.NotContains(t, r.raw, w.editor.ID)
				return
			}
			dec := json.NewDecoder(strings.NewReader(r.raw))
			dec.DisallowUnknownFields()
			var got identityapi.ApproverGroups
			require.NoError(t, dec.Decode(&got))
			assert.Equal(t, tt.want, got)
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
