package app

// Events starts runs from CloudEvents (POST /event) and plain webhooks (POST /webhook
// with a workflow reference).
type Events struct{}
