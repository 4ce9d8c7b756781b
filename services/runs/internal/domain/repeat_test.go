package domain

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/libs/param"
)

func TestDecisionRepeated(t *testing.T) {
	t.Parallel()
	ann := Actioner{ID: "ann", Name: "Ann"}
	bob := Actioner{ID: "bob", Name: "Bob"}
	form := []param.Param{{Name: "version", Type: "text", Required: true}, {Name: "count", Type: "number"}}
	approval := func(status ActionStatus, required int, votes ...Actioner) *Action {
		return &Action{Type: ApprovalAction, Status: status, Required: required, Actioners: votes}
	}
	tests := []struct {
		name string
		give *Action
		vote Vote
		want error
	}{
		{"the same approval, action open", approval(ActionSubmitted, 2, Actioner{ID: "ann", Approved: true}),
			Vote{By: ann, Approved: true}, ErrSameVote},
		{"the same approval, action approved by it", approval(ActionApproved, 1, Actioner{ID: "ann", Approved: true}),
			Vote{By: ann, Approved: true}, ErrSameVote},
		{"the same rejection, action rejected by it", approval(ActionRejected, 1, Actioner{ID: "ann", Comments: "no"}),
			Vote{By: ann, Comments: "no"}, ErrSameVote},
		{"a rejection after an approval", approval(ActionSubmitted, 2, Actioner{ID: "ann", Approved: true}),
			Vote{By: ann}, ErrVotedAlready},
		{"other comments", approval(ActionSubmitted, 2, Actioner{ID: "ann", Approved: true, Comments: "ok"}),
			Vote{By: ann, Approved: true, Comments: "fine"}, ErrVotedAlready},
		{"someone else on an action approved", approval(ActionApproved, 1, Actioner{ID: "ann", Approved: true}),
			Vote{By: bob, Approved: true}, ErrActionClosed},
		{"another decision on an action closed by its first", approval(ActionApproved, 1, Actioner{ID: "ann", Approved: true}),
			Vote{By: ann}, ErrActionClosed},
		{"the same form values, a number read back as an integer",
			&Action{Type: ManualAction, Status: ActionApproved, Required: 1, Form: form, Actioners: []Actioner{{ID: "ann", Approved: true}},
				Values: map[string]any{"version": "1.2", "count": int32(3)}},
			Vote{By: ann, Approved: true, Values: map[string]any{"version": "1.2", "count": 3.0}}, ErrSameVote},
		{"other form values", &Action{Type: ManualAction, Status: ActionApproved, Required: 1, Form: form,
			Actioners: []Actioner{{ID: "ann", Approved: true}}, Values: map[string]any{"version": "1.2"}},
			Vote{By: ann, Approved: true, Values: map[string]any{"version": "1.3"}}, ErrActionClosed},
		{"a first decision", approval(ActionSubmitted, 1), Vote{By: ann, Approved: true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			before := len(tt.give.Actioners)
			err := tt.give.Decide(tt.vote, "", t0)
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tt.want)
			assert.Len(t, tt.give.Actioners, before, "a refused or repeated decision adds no vote")
			assert.Equal(t, tt.want == ErrSameVote, tt.give.Repeats(tt.vote))
		})
	}
}
