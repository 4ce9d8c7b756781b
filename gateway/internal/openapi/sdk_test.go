package openapi

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/libs/client"
)

// The Go SDK (libs/client) is written by hand over the document; these tests keep the two
// in step: a new operation, or a property added to a schema, fails here until the SDK has
// it.

// sdkLeftOut are the operations the SDK has no method for, each with why.
var sdkLeftOut = map[string]string{
	"chatInstall":       "a redirect for browsers",
	"chatAuth":          "the chat platform's OAuth landing",
	"chatCommands":      "signed by the chat platform",
	"chatEvents":        "signed by the chat platform",
	"chatInteractivity": "signed by the chat platform",
	"getCallback":       "PostCallback, for links that cannot POST",
	"getDocs":           "a page for browsers",
}

// TestTheSDKHasAMethodForEachOperation: each operation has the method its operationId
// names, except the deprecated v4 paths (the same endpoints as the methods their
// x-maps-to names) and sdkLeftOut.
func TestTheSDKHasAMethodForEachOperation(t *testing.T) {
	t.Parallel()
	sdk := reflect.TypeFor[*client.Client]()
	for _, o := range operations(load(t)) {
		if o.Deprecated {
			continue
		}
		if _, left := sdkLeftOut[o.OperationID]; left {
			continue
		}
		name := strings.ToUpper(o.OperationID[:1]) + o.OperationID[1:]
		_, ok := sdk.MethodByName(name)
		assert.True(t, ok, "%s %s (%s) has no method %s in libs/client", o.method, o.path, o.OperationID, name)
	}
	for id := range sdkLeftOut {
		found := slices.ContainsFunc(operations(load(t)), func(o op) bool { return o.OperationID == id })
		assert.True(t, found, "%s is left out of the SDK but is no operation", id)
	}
}

// sdkTypes are the Go types of the document's object schemas.
var sdkTypes = map[string]any{
	"ClaimRequest": client.ClaimRequest{}, "WorkerRequest": client.WorkerRequest{}, "WorkerAttempt": client.WorkerAttempt{},
	"Changelog": client.Changelog{}, "ChangelogEntry": client.ChangelogEntry{}, "ParamOption": client.ParamOption{},
	"AbstractParam": client.AbstractParam{}, "NameValue": client.NameValue{}, "TriggerCondition": client.TriggerCondition{},
	"Trigger": client.Trigger{}, "Triggers": client.Triggers{}, "WorkflowWorkspace": client.WorkflowWorkspace{},
	"TaskDependency": client.TaskDependency{}, "WorkflowTask": client.WorkflowTask{}, "Workflow": client.Workflow{},
	"CanvasNode": client.CanvasNode{}, "CanvasEdge": client.CanvasEdge{}, "WorkflowCanvas": client.WorkflowCanvas{},
	"WorkflowTemplate": client.WorkflowTemplate{}, "TaskSpec": client.TaskSpec{}, "Task": client.Task{},
	"PipelineTask": client.PipelineTask{}, "RunInitiator": client.RunInitiator{}, "TaskRun": client.TaskRun{},
	"WorkflowRun": client.WorkflowRun{}, "WorkflowSubmitRequest": client.WorkflowSubmitRequest{},
	"WorkflowRunRequest": client.WorkflowRunRequest{}, "WorkflowRunCount": client.WorkflowRunCount{},
	"WorkflowRunInsight": client.WorkflowRunInsight{}, "WorkflowSchedule": client.WorkflowSchedule{},
	"WorkflowScheduleCalendar": client.WorkflowScheduleCalendar{}, "CronValidationResponse": client.CronValidationResponse{},
	"Actioner": client.Actioner{}, "Action": client.Action{}, "ActionRequest": client.ActionRequest{},
	"ActionSummary": client.ActionSummary{}, "TeamMember": client.TeamMember{}, "ApproverGroup": client.ApproverGroup{},
	"Quotas": client.Quotas{}, "Team": client.Team{}, "TeamRequest": client.TeamRequest{},
	"TeamNameCheckRequest": client.TeamNameCheckRequest{}, "TeamNameCheckResponse": client.TeamNameCheckResponse{},
	"TeamRole": client.TeamRole{}, "User": client.User{}, "UserRequest": client.UserRequest{},
	"UserProfile": client.UserProfile{}, "TeamSummary": client.TeamSummary{}, "TeamSummaryInsights": client.TeamSummaryInsights{},
	"Token": client.Token{}, "TokenCreateRequest": client.TokenCreateRequest{}, "TokenCreateResponse": client.TokenCreateResponse{},
	"SettingConfig": client.SettingConfig{}, "Setting": client.Setting{}, "SettingRequest": client.SettingRequest{},
	"Features": client.Features{}, "Navigation": client.Navigation{}, "HeaderNavigationResponse": client.HeaderNavigationResponse{},
	"OneTimeCode": client.OneTimeCode{}, "CodeHostLinkRequest": client.CodeHostLinkRequest{},
	"CodeHostInstallation": client.CodeHostInstallation{}, "Integration": client.Integration{},
	"CloudEvent": client.CloudEvent{}, "WebhookResult": client.WebhookResult{}, "PageSort": client.PageSort{},
	"Page": client.Page[any]{}, "WorkflowResponsePage": client.Page[client.Workflow]{},
	"WorkflowRunResponsePage": client.Page[client.WorkflowRun]{}, "TaskResponsePage": client.Page[client.Task]{},
	"WorkflowTemplateResponsePage": client.Page[client.WorkflowTemplate]{},
	"PageWorkflowSchedule":         client.Page[client.WorkflowSchedule]{}, "PageAction": client.Page[client.Action]{},
	"PageTeam": client.Page[client.Team]{}, "PageUser": client.Page[client.User]{}, "PageToken": client.Page[client.Token]{},
	"FieldError": client.FieldError{}, "AuthConfig": client.AuthConfig{}, "OIDCSignIn": client.OIDCSignIn{},
}

// sdkUntyped are the schemas without a Go type of their own, each with why.
var sdkUntyped = map[string]string{
	"ErrorBody":        "client.Error, read from it",
	"RunParamsRequest": "any: a list of NameValue or a map",
	"MemberRef":        "an id or email string, or client.MemberRef",
	"Labels":           "map[string]string",
	"Annotations":      "map[string]any",
}

// TestTheSDKHasAFieldForEachProperty: each object schema has its Go type in the SDK, and
// each of its properties (those of allOf parts included) a field of that JSON name and a
// kind that decodes it.
func TestTheSDKHasAFieldForEachProperty(t *testing.T) {
	t.Parallel()
	doc := load(t)
	for name, ref := range doc.Components.Schemas {
		props := properties(ref.Value)
		if len(props) == 0 {
			continue
		}
		if _, ok := sdkUntyped[name]; ok {
			continue
		}
		v, ok := sdkTypes[name]
		if !assert.True(t, ok, "schema %s has no Go type in libs/client (add it to sdkTypes)", name) {
			continue
		}
		fields := jsonFields(reflect.TypeOf(v))
		for prop, schema := range props {
			f, ok := fields[prop]
			if !assert.True(t, ok, "%s.%s has no field in %T", name, prop, v) {
				continue
			}
			assert.True(t, decodes(f, schema), "%s.%s is %s in the document, %s in %T", name, prop, kinds(schema), f, v)
		}
	}
}

func properties(s *openapi3.Schema) map[string]*openapi3.Schema {
	out := map[string]*openapi3.Schema{}
	for _, part := range s.AllOf {
		for k, v := range properties(part.Value) {
			out[k] = v
		}
	}
	for k, v := range s.Properties {
		out[k] = v.Value
	}
	return out
}

// jsonFields answers a struct's fields by JSON name, those of embedded structs included.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && tag == "" {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if tag != "" && tag != "-" {
			out[tag] = f.Type
		}
	}
	return out
}

func kinds(s *openapi3.Schema) []string {
	if s.Type == nil {
		return nil
	}
	return s.Type.Slice()
}

// decodes reports whether a field of type f takes every value schema s allows.
func decodes(f reflect.Type, s *openapi3.Schema) bool {
	for f.Kind() == reflect.Pointer {
		f = f.Elem()
	}
	if f.Kind() == reflect.Interface {
		return true
	}
	ks := slices.DeleteFunc(kinds(s), func(k string) bool { return k == "null" })
	if len(ks) == 0 && len(s.OneOf)+len(s.AnyOf) > 0 {
		// Shapes to choose from: the field must take each.
		for _, alt := range append(slices.Clone(s.OneOf), s.AnyOf...) {
			if !decodes(f, alt.Value) {
				return false
			}
		}
		return true
	}
	if len(ks) != 1 {
		return false // several types: only any takes them all
	}
	switch ks[0] {
	case "string":
		return f.Kind() == reflect.String || f == reflect.TypeFor[time.Time]()
	case "integer":
		return f.Kind() >= reflect.Int && f.Kind() <= reflect.Int64
	case "number":
		return f.Kind() == reflect.Float64
	case "boolean":
		return f.Kind() == reflect.Bool
	case "array":
		return f.Kind() == reflect.Slice && (s.Items == nil || decodes(f.Elem(), s.Items.Value))
	case "object":
		return f.Kind() == reflect.Struct || f.Kind() == reflect.Map
	}
	return false
}
