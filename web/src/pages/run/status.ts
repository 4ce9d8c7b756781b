// How the run page reads statuses and phases: one place for what has ended, what a waiting
// task waits on, and how long something took.
import type { Schemas } from "../../api/client";

export type Run = Schemas["WorkflowRun"];
export type TaskRun = Schemas["TaskRun"];
export type Status = Schemas["WorkflowRunStatus"];

/** ended says whether a run or task run is over: its phase is completed or finalized. */
export function ended(x: { phase?: string } | undefined): boolean {
  return x?.phase === "completed" || x?.phase === "finalized";
}

/** param is a task run's resolved param of that name, as text ("" when absent). */
export function param(t: TaskRun, name: string): string {
  const v = t.params?.find((p) => p.name === name)?.value;
  if (v === undefined || v === null) return "";
  return typeof v === "string" ? v : JSON.stringify(v);
}

/**
 * gate names what a task of a gate type waits on while it is waiting (or running, for a
 * runworkflow task waiting on its child): approval, a manual action, an event's topic, a
 * lock's key, a sleep's length. Undefined for a task that waits on nothing of the kind.
 */
export function gate(t: TaskRun): string | undefined {
  if (t.status !== "waiting" && !(t.status === "running" && t.type === "sleep")) return undefined;
  switch (t.type) {
    case "approval":
      return "waits for approval";
    case "manual":
      return "waits for a manual action";
    case "eventwait": {
      const topic = param(t, "topic");
      return topic ? `waits for event ${topic}` : "waits for an event";
    }
    case "acquirelock": {
      const key = param(t, "key");
      return key ? `waits for lock ${key}` : "waits for a lock";
    }
    case "sleep": {
      const ms = Number(param(t, "duration"));
      return Number.isFinite(ms) && ms > 0 ? `sleeps ${formatDuration(ms)}` : "sleeps";
    }
    default:
      return "waiting";
  }
}

/** elapsed is how long a run or task run has taken: its duration, counted on to now while it runs. */
export function elapsed(x: { startTime?: string; duration?: number; phase?: string }, now: number): number | undefined {
  if (!x.startTime) return undefined;
  if (ended(x) || x.phase !== "running") return x.duration;
  const since = now - Date.parse(x.startTime);
  return Math.max(x.duration ?? 0, since);
}

/** formatDuration writes milliseconds as a person reads them: 850 ms, 12.3 s, 4 min 5 s, 2 h 3 min. */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s - m * 60)} s`;
  const h = Math.floor(m / 60);
  return `${h} h ${m - h * 60} min`;
}
