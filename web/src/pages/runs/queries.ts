// The reads of the runs list, shared by its components and by the prefetch that starts them
// as soon as the address is known (before the page's code has arrived), so both ask for the
// same query and the page finds its answer on its way.
import { queryOptions, type QueryClient } from "@tanstack/react-query";
import { api, call } from "../../api/client";
import { parseRunFilters, runQuery, type RunFilters } from "./filters";

/**
 * runsQuery reads one page of the team's runs for the filters. A page read in the last 5
 * seconds (the list's own refresh period) is shown as it is: the page does not read again
 * what the prefetch has just read.
 */
export const runsQuery = (team: string, filters: RunFilters) => {
  const query = runQuery(filters);
  return queryOptions({
    queryKey: ["runs", team, query],
    queryFn: () => call(api.GET("/api/v2/team/{team}/workflowrun/query", { params: { path: { team }, query } })),
    staleTime: 5_000,
  });
};

/** workflowNamesQuery reads the team's workflows, for the workflow filter's suggestions. */
export const workflowNamesQuery = (team: string) =>
  queryOptions({
    queryKey: ["workflows", team, "names"],
    queryFn: () =>
      call(api.GET("/api/v2/team/{team}/workflow/query", { params: { path: { team }, query: { limit: 1000 } } })),
    staleTime: 60_000,
  });

/** prefetchRuns starts the reads of /teams/:team/runs for the address's filters. */
export function prefetchRuns(client: QueryClient, { params, search }: { params: { team?: string }; search: URLSearchParams }) {
  if (!params.team) return;
  void client.prefetchQuery(runsQuery(params.team, parseRunFilters(search)));
  void client.prefetchQuery(workflowNamesQuery(params.team));
}
