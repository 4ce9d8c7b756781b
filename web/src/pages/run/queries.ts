// The run page's reads. The run is one query, kept current by its watch (watch.ts): every
// part of the page reads it from the cache, so one event updates them all.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { api, call } from "../../api/client";
import type { ApiError } from "../../api/errors";
import { ended, type Run } from "./status";
import { watchRun, type WatchState } from "./watch";

export const runKey = (team: string, runId: string) => ["run", team, runId, "tasks"] as const;

function fetchRun(team: string, runId: string) {
  return call(api.GET("/api/v2/team/{team}/workflowrun/{workflowRunId}", { params: { path: { team, workflowRunId: runId } } }));
}

/**
 * useLiveRun reads the run with its task runs and keeps it current: on the run's watch
 * stream, or, where the server has none, by reading it again every second until it ends.
 */
export function useLiveRun(team: string, runId: string) {
  const client = useQueryClient();
  const [watch, setWatch] = useState<{ state: WatchState; error?: ApiError }>({ state: "connecting" });
  const run = useQuery({
    queryKey: runKey(team, runId),
    queryFn: () => fetchRun(team, runId),
    refetchInterval: (q) => (watch.state === "polling" && !ended(q.state.data) ? 1000 : false),
  });
  const readable = run.isSuccess;
  useEffect(() => {
    if (!readable) return;
    const ac = new AbortController();
    void watchRun({
      team,
      runId,
      signal: ac.signal,
      onRun: (r: Run) => client.setQueryData(runKey(team, runId), r),
      onState: (state, error) => setWatch({ state, error }),
    });
    return () => ac.abort();
  }, [client, team, runId, readable]);
  return { run, watch };
}

/** useWorkflowVersion reads the version of the workflow a run ran, for its tasks' dependencies and params. */
export function useWorkflowVersion(team: string, run: Run | undefined) {
  const name = run?.workflowRef ?? "";
  const version = run?.workflowVersion;
  return useQuery({
    queryKey: ["workflow", team, name, version],
    queryFn: () =>
      call(
        api.GET("/api/v2/team/{team}/workflow/{name}", {
          params: { path: { team, name }, query: version ? { version } : {} },
        }),
      ),
    enabled: name !== "",
    staleTime: Infinity,
  });
}

/** useParentTask finds which task of a child run's parent started it (the parent's task whose child it is). */
export function useParentTask(team: string, run: Run | undefined) {
  const parent = run?.parentRun ?? "";
  return useQuery({
    queryKey: ["run", team, parent, "tasks", "parent-of", run?.id],
    queryFn: async () => {
      const p = await fetchRun(team, parent);
      return p.tasks?.find((t) => t.workflowRunChildRef === run?.id)?.name ?? null;
    },
    enabled: parent !== "",
    staleTime: Infinity,
  });
}

/** useNow is the time, ticking every second while active (for the durations of what still runs). */
export function useNow(active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [active]);
  return now;
}
