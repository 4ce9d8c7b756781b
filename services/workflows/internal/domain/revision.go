package domain

// Namespace is where a catalog and its revisions live: one incarnation of a team (a team
// deleted and created again under the same name starts empty), or, as the zero value, the
// global workflow templates.
type Namespace struct {
	Team   string
	TeamID string
}

// IsTemplates reports whether ns holds the templates.
func (ns Namespace) IsTemplates() bool { return ns.Team == "" }

// Revision is the stored content of one version of a workflow. A version replaced in place
// gets a new revision, so a revision never changes once stored.
type Revision struct {
	Name    string
	Version int
	Rev     int
	// Changelog says who saved this revision, why and when.
	Changelog Changelog
	// Workflow is the definition without read-only fields; its Tasks are nil when read
	// without them.
	Workflow Workflow
}
