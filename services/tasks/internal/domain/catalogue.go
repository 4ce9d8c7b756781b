package domain

import (
	"encoding/json"

	"github.com/baton-flow/baton/libs/tasktype"
)

// CatalogueAuthor is the changelog author of the tasks Baton seeds.
const CatalogueAuthor = "baton"

// Images the catalogue's runner tasks use, pinned so a run today and a run next year
// execute the same thing.
const (
	curlImage   = "curlimages/curl:8.10.1"
	alpineImage = "alpine:3.20"
)

// Catalogue returns the global tasks Baton ships: one per system task type (API §5), with
// that type's params, and a few ready-made templates. They are verified, version 1.
func Catalogue() []Task {
	return []Task{
		system("switch", "Switch", tasktype.Decision, "logic", "switch",
			"Chooses the outgoing paths whose decision condition matches a value.",
			param("value", "Value", "text", true, "The value the outgoing edges' decision conditions are matched against.")),
		system("wait-for-event", "Wait for event", tasktype.EventWait, "logic", "event",
			"Waits until a callback with this topic arrives for the run (one that came first is kept).",
			param("topic", "Topic", "text", true, "The topic a callback must name to end the wait.")),
		system("manual-approval", "Manual approval", tasktype.Approval, "people", "approval",
			"Waits for approvals: approved, the task succeeds; rejected, it fails.",
			param("approverGroupRef", "Approver group", "text", false, "The approver group whose members decide; any team member with action rights when empty."),
			withDefault(param("numberOfApprovers", "Number of approvers", "number", false, "How many distinct approvals approve."), 1),
			param("instructions", "Instructions", "textarea", false, "What the approvers should check.")),
		system("manual-task", "Manual task", tasktype.Manual, "people", "manual",
			"Waits until a person marks the work done.",
			param("instructions", "Instructions", "texteditor", true, "What has to be done.")),
		system("set-result-parameter", "Set result parameter", tasktype.SetWFProperty, "workflow", "property",
			"Adds a result to the workflow run.",
			param("output", "Result name", "text", true, "The name of the run result."),
			param("value", "Value", "text", true, "The value of the run result.")),
		system("set-workflow-result-status", "Set workflow result status", tasktype.SetWFStatus, "workflow", "status",
			"Sets the status the run ends with.",
			withOptions(param("status", "Status", "select", true, "The run's final status."), "succeeded", "failed")),
		system("sleep", "Sleep", tasktype.Sleep, "logic", "sleep",
			"Waits for a while; the timer survives restarts.",
			param("duration", "Duration (ms)", "number", true, "How long to wait, in milliseconds.")),
		system("acquire-lock", "Acquire lock", tasktype.AcquireLock, "logic", "lock",
			"Takes a team-wide named lock, waiting while another run holds it; released when the run ends.",
			param("key", "Lock key", "text", true, "The lock's name within the team."),
			param("timeout", "Timeout (s)", "number", false, "How long to wait for the lock, in seconds.")),
		system("release-lock", "Release lock", tasktype.ReleaseLock, "logic", "unlock",
			"Releases a lock this run holds.",
			param("key", "Lock key", "text", true, "The lock's name within the team.")),
		system("run-workflow", "Run workflow", tasktype.RunWorkflow, "workflow", "workflow",
			"Starts a run of another workflow of the team and takes its status.",
			param("workflowRef", "Workflow", "text", true, "The name of the workflow to run."),
			param("workflowVersion", "Workflow version", "number", false, "The version to run; the latest when empty."),
			withDefault(param("wait", "Wait for it", "boolean", false, "Wait for the child run to end (false: start it and go on)."), true),
			param("params", "Parameters", "json", false, "Parameters of the child run, as a JSON object.")),
		system("run-scheduled-workflow", "Run scheduled workflow", tasktype.RunScheduledWorkflow, "workflow", "schedule",
			"Schedules a later run of a workflow of the team.",
			param("workflowRef", "Workflow", "text", true, "The name of the workflow to run."),
			param("futureIn", "In", "number", false, "How many periods from now."),
			withOptions(param("futurePeriod", "Period", "select", false, "The unit of 'In'."), "minutes", "hours", "days", "weeks", "months"),
			param("time", "Time", "text", false, "The time of day (HH:mm) for periods of days or longer; "+
				"without 'In', a date and time (RFC 3339) to run at."),
			param("timezone", "Time zone", "text", false, "An IANA time zone for the time; UTC when empty."),
			param("params", "Parameters", "json", false, "Parameters of the scheduled run, as a JSON object."),
			param("labels", "Labels", "json", false, "Labels of the schedule and its run, as a JSON object.")),
		system("run-custom-task", "Run custom task", tasktype.Custom, "containers", "container",
			"Runs a container image or script given inline.",
			param("image", "Image", "text", true, "The container image."),
			param("command", "Command", "text", false, "The command to run, overriding the image's entrypoint."),
			param("arguments", "Arguments", "textarea", false, "Arguments, one per line."),
			param("script", "Script", "texteditor::shell", false, "A script to run instead of a command."),
			param("envs", "Environment", "json", false, "Environment variables, as a JSON object of names to values.")),
		system("send-to-worker", "Send to worker", tasktype.Generic, "workers", "worker",
			"Hands the task to an external worker polling a named queue, and takes its outcome.",
			param("queue", "Queue", "text", true, "The queue the worker polls.")),
		withImage(system("execute-shell", "Execute shell", tasktype.Script, "containers", "terminal",
			"Runs a shell script on a runner.",
			param("script", "Script", "texteditor::shell", true, "The script to run."),
			withDefault(param("shell", "Shell", "text", false, "The shell that runs the script."), "/bin/sh")), alpineImage),
		httpRequest(),
		jsonTransform(),
		chatMessage(),
	}
}

func system(name, display, typ, category, icon, description string, params ...Param) Task {
	return Task{
		Name: name, DisplayName: display, Description: description, Type: typ, Status: StatusActive,
		Category: category, Icon: icon, Verified: true, Scope: ScopeGlobal,
		Labels: map[string]string{"baton.io/catalogue": "system"},
		Spec:   Spec{Params: params},
	}
}

func template(name, display, category, icon, description, image, script string, envs []Env, params []Param, results ...Result) Task {
	return Task{
		Name: name, DisplayName: display, Description: description, Type: tasktype.Template, Status: StatusActive,
		Category: category, Icon: icon, Verified: true, Scope: ScopeGlobal,
		Labels: map[string]string{"baton.io/catalogue": "template"},
		Spec:   Spec{Image: image, Script: script, Envs: envs, Params: params, Results: results},
	}
}

func withImage(t Task, image string) Task {
	t.Spec.Image = image
	return t
}

func param(name, label, typ string, required bool, description string) Param {
	return Param{Name: name, Label: label, Type: typ, Required: required, Description: description}
}

func withDefault(p Param, v any) Param {
	p.Default, _ = json.Marshal(v)
	return p
}

func withOptions(p Param, values ...string) Param {
	for _, v := range values {
		p.Options = append(p.Options, ParamOption{Key: v, Value: v})
	}
	return p
}

// The templates pass params through environment variables rather than into the script's
// text, so a value with quotes or newlines cannot change what the script does.

func httpRequest() Task {
	return template("http-request", "HTTP request", "integrations", "http",
		"Sends an HTTP request with curl; the status code and the response body are its results.",
		curlImage, `set -eu
out=$(mktemp)
set -- --silent --show-error --location --request "${METHOD:-GET}" --output "$out" --write-out '%{http_code}'
while IFS= read -r header; do
  if [ -n "$header" ]; then set -- "$@" --header "$header"; fi
done <<EOF
$HEADERS
EOF
if [ -n "${BODY:-}" ]; then set -- "$@" --data-binary "$BODY"; fi
status=$(curl "$@" "$URL")
printf '%s' "$status" > "$(results.status.path)"
cp "$out" "$(results.body.path)"
`,
		[]Env{{"URL", "$(params.url)"}, {"METHOD", "$(params.method)"}, {"HEADERS", "$(params.headers)"}, {"BODY", "$(params.body)"}},
		[]Param{
			param("url", "URL", "url", true, "The URL to call."),
			withDefault(withOptions(param("method", "Method", "select", false, "The HTTP method."),
				"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"), "GET"),
			param("headers", "Headers", "textarea", false, "Request headers, one 'Name: value' per line."),
			param("body", "Body", "texteditor", false, "The request body."),
		},
		Result{Name: "status", Description: "The HTTP status code."},
		Result{Name: "body", Description: "The response body."},
	)
}

func jsonTransform() Task {
	return template("json-transform", "JSON transform", "utilities", "json",
		"Transforms a JSON document with a jq filter; the compact JSON output is its result.",
		alpineImage, `set -eu
command -v jq >/dev/null 2>&1 || apk add --no-cache jq >/dev/null
printf '%s' "$INPUT" | jq -c "$FILTER" > "$(results.output.path)"
`,
		[]Env{{"INPUT", "$(params.input)"}, {"FILTER", "$(params.filter)"}},
		[]Param{
			param("input", "Input", "texteditor", true, "The JSON document."),
			withDefault(param("filter", "jq filter", "text", true, "The jq filter, for example '.items | length'."), "."),
		},
		Result{Name: "output", Description: "The filter's output, as compact JSON."},
	)
}

func chatMessage() Task {
	return template("send-chat-message", "Send chat message", "integrations", "chat",
		"Posts a message to a chat incoming webhook (Slack, Mattermost, Google Chat, Teams: {\"text\": …}).",
		curlImage, `set -eu
status=$(curl --silent --show-error --output /dev/null --write-out '%{http_code}' \
  --variable %TEXT --expand-data '{"text":"{{TEXT:json}}"}' \
  --header 'Content-Type: application/json' "$WEBHOOK_URL")
printf '%s' "$status" > "$(results.status.path)"
case "$status" in
  2*) ;;
  *) echo "the webhook answered $status" >&2; exit 1 ;;
esac
`,
		[]Env{{"WEBHOOK_URL", "$(params.webhookUrl)"}, {"TEXT", "$(params.text)"}},
		[]Param{
			{Name: "webhookUrl", Label: "Webhook URL", Type: "password", Required: true,
				Description: "The channel's incoming webhook URL; it is a secret, so it is masked."},
			param("text", "Message", "textarea", true, "The message to post."),
		},
		Result{Name: "status", Description: "The HTTP status code the webhook answered."},
	)
}
