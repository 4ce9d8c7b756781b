// What the UI reads for an address starts when the address is known, not when the component
// that shows it first renders: a page's code arrives in its own chunk, and its reads would
// otherwise wait for that chunk and for the shell above it (a waterfall of round trips and
// renders). prefetchRoute is called with the page's address before the first render, and
// again at each navigation, before the router renders the new page.
import type { QueryClient } from "@tanstack/react-query";
import { matchRoutes, type Params, type RouteObject } from "react-router";
import { isAdmin, profileQuery } from "./api/profile";
import { getToken } from "./session/session";
import { allTeamsQuery } from "./shell/teams";

/** Where a page is going: its route's parameters and the address's query. */
export interface PrefetchAt {
  params: Params;
  search: URLSearchParams;
}

/** RouteHandle is what a route of routes.tsx declares for prefetchRoute (its `handle`). */
export interface RouteHandle {
  /** Starts loading the page's code. */
  preload?: () => Promise<unknown>;
  /** Starts the reads the page needs first (TanStack Query's prefetchQuery, same keys as the page's). */
  prefetch?: (client: QueryClient, at: PrefetchAt) => void;
}

/**
 * prefetchRoute starts, for a signed-in visitor, the shell's reads (the profile, then every
 * team for an administrator) and, for each route the address matches, its page's code and
 * reads. Nothing waits on it: the components read the same queries, finding them fetched or
 * on their way; a failed prefetch is read again by the component, which shows the error.
 */
export function prefetchRoute(client: QueryClient, routes: RouteObject[], location: { pathname: string; search: string }) {
  const token = getToken();
  if (token === null) return; // The sign-in page comes first.
  void client.fetchQuery(profileQuery(token)).then(
    (p) => {
      if (isAdmin(p)) void client.prefetchQuery(allTeamsQuery);
    },
    () => undefined, // The shell shows it.
  );
  const search = new URLSearchParams(location.search);
  for (const m of matchRoutes(routes, location.pathname) ?? []) {
    const h = m.route.handle as RouteHandle | undefined;
    void h?.preload?.().catch(() => undefined); // The page's own import shows the failure.
    h?.prefetch?.(client, { params: m.params, search });
  }
}
