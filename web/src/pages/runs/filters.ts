// The runs list's filters live in the URL (a filtered list is a deep link); these turn the
// URL's query into filters, filters back into a URL, and filters into the search's query
// (GET /api/v2/team/{team}/workflowrun/query).

export const RUN_STATUSES = [
  "notstarted",
  "ready",
  "running",
  "waiting",
  "succeeded",
  "failed",
  "invalid",
  "skipped",
  "cancelled",
  "timedout",
] as const;
export const RUN_TRIGGERS = ["manual", "schedule", "webhook", "event", "codehost", "chat", "task", "retry"] as const;
export const PAGE_SIZES = [25, 50, 100] as const;
const DEFAULT_SIZE = 25;

export interface RunFilters {
  statuses: string[];
  workflows: string[];
  triggers: string[];
  /** `key=value` pairs; runs having all of them match. */
  labels: string[];
  /** Created on or after this local day, `YYYY-MM-DD`. */
  from: string;
  /** Created on or before this local day, `YYYY-MM-DD`. */
  to: string;
  /** From 0; the URL shows it from 1. */
  page: number;
  size: number;
  order: "desc" | "asc";
}

const list = (v: string | null): string[] =>
  (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");

const day = /^\d{4}-\d{2}-\d{2}$/;

/** parseRunFilters reads filters from a URL's query; what does not parse takes its default. */
export function parseRunFilters(q: URLSearchParams): RunFilters {
  const page = Number.parseInt(q.get("page") ?? "", 10);
  const size = Number.parseInt(q.get("size") ?? "", 10);
  const from = q.get("from") ?? "";
  const to = q.get("to") ?? "";
  return {
    statuses: list(q.get("statuses")),
    workflows: list(q.get("workflows")),
    triggers: list(q.get("triggers")),
    labels: list(q.get("labels")),
    from: day.test(from) ? from : "",
    to: day.test(to) ? to : "",
    page: Number.isFinite(page) && page >= 1 ? page - 1 : 0,
    size: (PAGE_SIZES as readonly number[]).includes(size) ? size : DEFAULT_SIZE,
    order: q.get("order")?.toLowerCase() === "asc" ? "asc" : "desc",
  };
}

/** runFiltersToSearch writes filters as a URL's query, leaving defaults out. */
export function runFiltersToSearch(f: RunFilters): URLSearchParams {
  const q = new URLSearchParams();
  const put = (k: string, v: string[]) => {
    if (v.length > 0) q.set(k, v.join(","));
  };
  put("statuses", f.statuses);
  put("workflows", f.workflows);
  put("triggers", f.triggers);
  put("labels", f.labels);
  if (f.from) q.set("from", f.from);
  if (f.to) q.set("to", f.to);
  if (f.order !== "desc") q.set("order", f.order);
  if (f.size !== DEFAULT_SIZE) q.set("size", String(f.size));
  if (f.page > 0) q.set("page", String(f.page + 1));
  return q;
}

/** startOfDay and endOfDay are a local day's first and last millisecond since the epoch. */
function startOfDay(d: string): number {
  const [y, m, dd] = d.split("-").map(Number) as [number, number, number];
  return new Date(y, m - 1, dd, 0, 0, 0, 0).getTime();
}
function endOfDay(d: string): number {
  const [y, m, dd] = d.split("-").map(Number) as [number, number, number];
  return new Date(y, m - 1, dd, 23, 59, 59, 999).getTime();
}

export interface RunQuery {
  statuses?: string[];
  workflows?: string[];
  triggers?: string[];
  labels?: string[];
  fromDate?: number;
  toDate?: number;
  page: number;
  limit: number;
  order: "ASC" | "DESC";
}

/** runQuery is the search's query for filters; empty filters are left out (they match all). */
export function runQuery(f: RunFilters): RunQuery {
  const q: RunQuery = { page: f.page, limit: f.size, order: f.order === "asc" ? "ASC" : "DESC" };
  if (f.statuses.length > 0) q.statuses = f.statuses;
  if (f.workflows.length > 0) q.workflows = f.workflows;
  if (f.triggers.length > 0) q.triggers = f.triggers;
  if (f.labels.length > 0) q.labels = f.labels;
  if (f.from) q.fromDate = startOfDay(f.from);
  if (f.to) q.toDate = endOfDay(f.to);
  return q;
}

/** hasFilters says whether any filter narrows the list. */
export function hasFilters(f: RunFilters): boolean {
  return f.statuses.length + f.workflows.length + f.triggers.length + f.labels.length > 0 || f.from !== "" || f.to !== "";
}

/** formatDuration writes milliseconds as people read them: 850 ms, 12.3 s, 4 min 5 s, 2 h 3 min. */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  const total = Math.floor(s);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  if (h > 0) return `${h} h ${m} min`;
  return `${m} min ${sec} s`;
}
