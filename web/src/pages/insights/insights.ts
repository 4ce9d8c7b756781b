// What the insights page draws, computed from GET /team/{team}/insights: the API answers
// totals, the median and the newest 1,000 runs of the window; runs by day, percentiles and
// the per-workflow table are derived here from those runs.
import type { Schemas } from "../../api/client";

export type InsightRun = Schemas["WorkflowRunInsight"]["runs"][number];
export type RunStatus = InsightRun["status"];

/** statusOrder is the order of statuses in the stacked bars and their legend. */
export const statusOrder: RunStatus[] = [
  "succeeded",
  "failed",
  "timedout",
  "cancelled",
  "invalid",
  "skipped",
  "running",
  "waiting",
  "ready",
  "notstarted",
];

const DAY = 86_400_000;

/** dayKey is a time's UTC day, as YYYY-MM-DD. */
export function dayKey(t: number): string {
  return new Date(t).toISOString().slice(0, 10);
}

export type DayBucket = { day: string; total: number } & Partial<Record<RunStatus, number>>;

/**
 * byDay counts the runs of each UTC day from `from` to `to` (both included) by status; days
 * without runs are there with a total of 0, so the axis is time, not just days with runs.
 */
export function byDay(runs: InsightRun[], from: number, to: number): DayBucket[] {
  const buckets = new Map<string, DayBucket>();
  const start = Date.UTC(new Date(from).getUTCFullYear(), new Date(from).getUTCMonth(), new Date(from).getUTCDate());
  // A window longer than a year is drawn from its runs' days only.
  if (to >= start && (to - start) / DAY <= 366) {
    for (let t = start; t <= to; t += DAY) buckets.set(dayKey(t), { day: dayKey(t), total: 0 });
  }
  for (const r of runs) {
    const day = dayKey(Date.parse(r.creationDate));
    let b = buckets.get(day);
    if (!b) {
      b = { day, total: 0 };
      buckets.set(day, b);
    }
    b[r.status] = (b[r.status] ?? 0) + 1;
    b.total += 1;
  }
  return [...buckets.values()].sort((a, b) => a.day.localeCompare(b.day));
}

/** statusesIn lists the statuses the buckets hold, in statusOrder. */
export function statusesIn(days: DayBucket[]): RunStatus[] {
  return statusOrder.filter((s) => days.some((d) => (d[s] ?? 0) > 0));
}

/**
 * percentile is the nearest-rank percentile (p in 0..100) of sorted values: the smallest value
 * at least p% of them do not exceed; undefined for no values.
 */
export function percentile(sorted: number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}

export interface Percentiles {
  count: number;
  p50?: number;
  p90?: number;
  p99?: number;
}

const finished = new Set<RunStatus>(["succeeded", "failed", "timedout", "cancelled", "invalid", "skipped"]);

/** percentiles are the duration percentiles of the finished runs (a run in flight has no duration yet). */
export function percentiles(runs: InsightRun[]): Percentiles {
  const d = runs.filter((r) => finished.has(r.status)).map((r) => r.duration).sort((a, b) => a - b);
  return { count: d.length, p50: percentile(d, 50), p90: percentile(d, 90), p99: percentile(d, 99) };
}

export interface WorkflowRow extends Percentiles {
  workflow: string;
  runs: number;
  succeeded: number;
  failed: number;
  /** Succeeded of finished, 0..1; undefined when none finished. */
  successRate?: number;
  lastRun: string;
}

/** perWorkflow is one row per workflow of the runs. */
export function perWorkflow(runs: InsightRun[]): WorkflowRow[] {
  const groups = new Map<string, InsightRun[]>();
  for (const r of runs) {
    const name = r.workflowName || r.workflowRef;
    const g = groups.get(name);
    if (g) g.push(r);
    else groups.set(name, [r]);
  }
  return [...groups.entries()].map(([workflow, rs]) => {
    const p = percentiles(rs);
    const succeeded = rs.filter((r) => r.status === "succeeded").length;
    const failed = rs.filter((r) => r.status === "failed" || r.status === "timedout" || r.status === "invalid").length;
    return {
      workflow,
      runs: rs.length,
      succeeded,
      failed,
      successRate: p.count > 0 ? succeeded / p.count : undefined,
      lastRun: rs.reduce((a, r) => (r.creationDate > a ? r.creationDate : a), ""),
      ...p,
    };
  });
}

export type SortKey = "workflow" | "runs" | "succeeded" | "failed" | "successRate" | "p50" | "p90" | "p99" | "lastRun";

/** sortRows orders rows by a column; rows without a value go last either way. */
export function sortRows(rows: WorkflowRow[], key: SortKey, desc: boolean): WorkflowRow[] {
  return [...rows].sort((a, b) => {
    const x = a[key];
    const y = b[key];
    if (x === undefined && y === undefined) return a.workflow.localeCompare(b.workflow);
    if (x === undefined) return 1;
    if (y === undefined) return -1;
    const c = typeof x === "string" ? x.localeCompare(y as string) : (x as number) - (y as number);
    return (desc ? -c : c) || a.workflow.localeCompare(b.workflow);
  });
}

/** formatDuration writes milliseconds for people: 850 ms, 12.3 s, 4 min 05 s, 2 h 03 min. */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined) return "—";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`;
}
