// Every page of the UI, in one table. A page is a React.lazy chunk in pages/<area>/, so the
// first load carries only the shell; add one line per page. `nav` puts a page in the
// navigation bar (team pages) or the administration menu (admin pages).
import { lazy, type ComponentType, type LazyExoticComponent } from "react";
import type { RouteObject } from "react-router";
import { IconAdjustments, IconCalendarTime, IconChartBar, IconChecklist, IconPlayerPlay, IconSitemap, type Icon } from "@tabler/icons-react";
import { Page } from "./shell/Page";
import { RequireSignIn } from "./shell/RequireSignIn";
import { Shell } from "./shell/Shell";
import { Home } from "./shell/Home";
import { TeamLayout } from "./shell/TeamLayout";
import { prefetchRuns } from "./pages/runs/queries";
import type { RouteHandle } from "./prefetch";

export interface NavEntry {
  label: string;
  icon: Icon;
  /** Shown with the count of the team's pending actions. */
  pendingActions?: boolean;
}

export interface PageEntry {
  /** The path below /teams/:team/ (team pages) or /admin/ (admin pages). */
  path: string;
  page: LazyExoticComponent<ComponentType> & { preload?: () => Promise<unknown> };
  nav?: NavEntry;
  /** Starts the page's first reads as soon as its address is known (prefetch.ts). */
  prefetch?: RouteHandle["prefetch"];
}

/** preloaded is React.lazy whose chunk can be asked for before the page renders (prefetch.ts). */
function preloaded(load: () => Promise<{ default: ComponentType }>) {
  return Object.assign(lazy(load), { preload: load });
}

const TeamSettingsPage = lazy(() => import("./pages/admin/TeamSettingsPage"));

/** Pages of one team, under /teams/:team/. */
export const teamPages: PageEntry[] = [
  { path: "runs", page: preloaded(() => import("./pages/runs/RunsPage")), nav: { label: "Runs", icon: IconPlayerPlay }, prefetch: prefetchRuns },
  { path: "runs/:runId", page: lazy(() => import("./pages/run/RunPage")) },
  { path: "actions", page: lazy(() => import("./pages/actions/ActionsPage")), nav: { label: "Actions", icon: IconChecklist, pendingActions: true } },
  { path: "actions/:actionId", page: lazy(() => import("./pages/actions/ActionPage")) },
  { path: "schedules", page: lazy(() => import("./pages/schedules/SchedulesPage")), nav: { label: "Schedules", icon: IconCalendarTime } },
  { path: "schedules/new", page: lazy(() => import("./pages/schedules/SchedulePage")) },
  { path: "schedules/:scheduleId", page: lazy(() => import("./pages/schedules/SchedulePage")) },
  { path: "workflows", page: lazy(() => import("./pages/workflows/WorkflowsPage")), nav: { label: "Workflows", icon: IconSitemap } },
  { path: "workflows/:name", page: lazy(() => import("./pages/workflows/DesignerPage")) },
  { path: "workflows/:name/versions", page: lazy(() => import("./pages/workflows/HistoryPage")) },
  { path: "workflows/:name/diff", page: lazy(() => import("./pages/workflows/DiffPage")) },
  { path: "insights", page: lazy(() => import("./pages/insights/InsightsPage")), nav: { label: "Insights", icon: IconChartBar } },
  { path: "settings", page: TeamSettingsPage, nav: { label: "Settings", icon: IconAdjustments } },
  { path: "settings/:tab", page: TeamSettingsPage },
];

/** Administration pages, under /admin/, shown to principals holding a global grant. */
export const adminPages: PageEntry[] = [
  { path: "teams", page: lazy(() => import("./pages/admin/AdminTeamsPage")), nav: { label: "Teams", icon: IconAdjustments } },
  { path: "parameters", page: lazy(() => import("./pages/admin/AdminParametersPage")) },
  { path: "tokens", page: lazy(() => import("./pages/admin/AdminTokensPage")) },
  { path: "settings", page: lazy(() => import("./pages/admin/AdminSettingsPage")) },
];

const SignInPage = lazy(() => import("./pages/signin/SignInPage"));
const SignInCallbackPage = lazy(() => import("./pages/signin/SignInCallbackPage"));
const NotFoundPage = lazy(() => import("./pages/notfound/NotFoundPage"));

const child = (e: PageEntry): RouteObject => ({
  path: e.path,
  element: <Page page={e.page} />,
  handle: { preload: e.page.preload, prefetch: e.prefetch } satisfies RouteHandle,
});

export const routes: RouteObject[] = [
  { path: "/signin", element: <Page page={SignInPage} /> },
  { path: "/signin/callback", element: <Page page={SignInCallbackPage} /> },
  {
    element: (
      <RequireSignIn>
        <Shell />
      </RequireSignIn>
    ),
    children: [
      { index: true, element: <Home /> },
      { path: "teams/:team", element: <TeamLayout />, children: [{ index: true, element: <Home /> }, ...teamPages.map(child)] },
      ...(adminPages.length > 0 ? [{ path: "admin", children: adminPages.map(child) }] : []),
      { path: "*", element: <Page page={NotFoundPage} /> },
    ],
  },
];
