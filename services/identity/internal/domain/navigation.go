package domain

import "net/url"

// Navigation entry types.
const (
	NavLink    = "link"
	NavMenu    = "menu"
	NavDivider = "divider"
)

// NavItem is one entry of the web UI's navigation; a menu lists its entries in ChildLinks.
type NavItem struct {
	Name       string
	Type       string
	Icon       string
	Link       string
	ChildLinks []NavItem
	Disabled   bool
	Beta       bool
}

// NavAccess is what the caller may see: Admin for those who administer the instance
// (admins and operators), Member for those who belong to Team (or see every team).
type NavAccess struct {
	Admin  bool
	Team   string
	Member bool
}

// navEntry is a navigation entry shown only when its feature (if any) is on.
type navEntry struct {
	item    NavItem
	feature string
}

func link(name, icon, href string) NavItem {
	return NavItem{Name: name, Type: NavLink, Icon: icon, Link: href}
}

// Navigation builds the caller's navigation: home for everyone; the team's pages for its
// members when a team is asked for; the administration menu for admins and operators.
// Entries of features turned off are left out, and so is a menu left empty.
func Navigation(access NavAccess, s Settings) []NavItem {
	keep := func(entries []navEntry) []NavItem {
		var out []NavItem
		for _, e := range entries {
			if e.feature == "" || s.Feature(e.feature) {
				out = append(out, e.item)
			}
		}
		return out
	}
	items := []NavItem{link("Home", "Home", "/home")}
	if access.Team != "" && access.Member {
		base := "/" + url.PathEscape(access.Team)
		items = append(items, keep([]navEntry{
			{item: link("Workflows", "FlowData", base+"/workflows")},
			{item: link("Activity", "Activity", base+"/activity"), feature: "activity"},
			{item: link("Actions", "TaskApproved", base+"/actions")},
			{item: link("Schedules", "CalendarHeatMap", base+"/schedules"), feature: "workflow.triggers"},
			{item: link("Insights", "ChartMultitype", base+"/insights"), feature: "insights"},
		})...)
		if manage := keep([]navEntry{
			{item: link("Team", "UserMultiple", base+"/manage/team"), feature: "team.management"},
			{item: link("Tasks", "Task", base+"/manage/task-manager"), feature: "team.tasks"},
			{item: link("Parameters", "Parameter", base+"/manage/parameters"), feature: "team.parameters"},
			{item: link("Tokens", "Password", base+"/manage/tokens"), feature: "workflow.tokens"},
			{item: link("Quotas", "Meter", base+"/manage/quotas"), feature: "workflow.quotas"},
		}); len(manage) > 0 {
			items = append(items, NavItem{Name: "Manage", Type: NavMenu, Icon: "SettingsAdjust", ChildLinks: manage})
		}
	}
	if access.Admin {
		admin := keep([]navEntry{
			{item: link("Teams", "UserMultiple", "/admin/teams"), feature: "team.management"},
			{item: link("Users", "User", "/admin/users"), feature: "user.management"},
			{item: link("Tasks", "Task", "/admin/task-manager")},
			{item: link("Workflow templates", "Template", "/admin/workflow-templates")},
			{item: link("Parameters", "Parameter", "/admin/parameters"), feature: "global.parameters"},
			{item: link("Tokens", "Password", "/admin/tokens")},
			{item: link("Quotas", "Meter", "/admin/quotas"), feature: "workflow.quotas"},
			{item: link("Settings", "Settings", "/admin/settings")},
		})
		items = append(items, NavItem{Type: NavDivider},
			NavItem{Name: "Administer", Type: NavMenu, Icon: "Settings", ChildLinks: admin})
	}
	return items
}

// Platform is the header's description of the instance (GET /context).
type Platform struct {
	Name            string
	Version         string
	AppName         string
	PlatformName    string
	CommunityURL    string
	PrivateTeams    bool
	DisplayLogo     bool
	LogoURL         string
	SignOutURL      string
	BaseServicesURL string
}

// PlatformMessage is a message shown to everyone in the header.
type PlatformMessage struct {
	Kind    string
	Title   string
	Message string
}

// Context is the header's context: the platform, its header flags, the caller's
// navigation and the platform message, if any.
type Context struct {
	Platform   Platform
	Features   map[string]bool
	Navigation []NavItem
	Message    *PlatformMessage
}

// HeaderContext builds the context from the settings for a caller with access.
func HeaderContext(version string, access NavAccess, s Settings) Context {
	get := func(key string) string {
		v, _ := s.Value(SettingPlatform + "." + key)
		return v
	}
	appName := get("appName")
	if appName == "" {
		appName = PlatformName
	}
	c := Context{
		Platform: Platform{
			Name: PlatformName, Version: version, AppName: appName, PlatformName: PlatformName,
			CommunityURL: get("communityUrl"), PrivateTeams: s.Bool(SettingPlatform + ".privateTeams"),
			DisplayLogo: s.Bool(SettingPlatform + ".displayLogo"), LogoURL: get("logoURL"),
			SignOutURL: get("signOutUrl"), BaseServicesURL: get("baseServicesUrl"),
		},
		Features:   make(map[string]bool, len(HeaderFeatures)),
		Navigation: Navigation(access, s),
	}
	for _, f := range HeaderFeatures {
		c.Features[f] = s.Bool(SettingPlatform + "." + f)
	}
	if msg := get("message"); msg != "" {
		c.Message = &PlatformMessage{Kind: get("messageKind"), Message: msg}
	}
	return c
}
