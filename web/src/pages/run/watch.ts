// Following a run live: GET /team/{team}/workflowrun/{id}/watch, Server-Sent Events whose
// data is the run (with its task runs) at once and again at each change, until the run ends.
import { asApiError, fromResponse, type ApiError } from "../../api/errors";
import { readEvents } from "../../api/sse";
import { getToken } from "../../session/session";
import { ended, type Run } from "./status";

/**
 * WatchState is how the page is kept current: `live` on the stream, `reconnecting` after it
 * was cut (with Last-Event-ID, after a short wait that grows on repeated failures), `polling`
 * when this server has no watch route, `ended` once the run has ended (nothing will change),
 * `refused` when the watch was refused (the run's read shows why).
 */
export type WatchState = "connecting" | "live" | "reconnecting" | "polling" | "ended" | "refused";

export interface WatchOptions {
  team: string;
  runId: string;
  onRun: (run: Run) => void;
  onState: (state: WatchState, error?: ApiError) => void;
  signal: AbortSignal;
  fetch?: typeof fetch;
  /** wait sleeps before a reconnect (replaced in tests). */
  wait?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const firstDelay = 250;
const maxDelay = 10_000;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    });
  });
}

async function errorOf(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => "");
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: fromResponse quotes the text.
  }
  return fromResponse(response, body);
}

/**
 * watchRun follows a run until it ends or signal aborts, calling onRun with each state the
 * server sends. A stream cut short (a network error, an instance shutting down, the body
 * ending before the run did) is opened again with the last event's id; an answer that is
 * not 2xx stops it: 404 or 405 without the contract's WORKFLOWRUN_NOT_FOUND means the server
 * predates the watch route, and the caller polls instead.
 */
export async function watchRun(o: WatchOptions): Promise<void> {
  const doFetch = o.fetch ?? fetch;
  const wait = o.wait ?? sleep;
  const path = `/api/v2/team/${encodeURIComponent(o.team)}/workflowrun/${encodeURIComponent(o.runId)}/watch`;
  let lastId = "";
  let delay = firstDelay;
  o.onState("connecting");
  while (!o.signal.aborted) {
    const headers = new Headers({ Accept: "text/event-stream" });
    const token = getToken();
    if (token) headers.set("Authorization", `Bearer ${token}`);
    if (lastId) headers.set("Last-Event-ID", lastId);
    try {
      const response = await doFetch(path, { headers, signal: o.signal, cache: "no-store" });
      if (!response.ok) {
        const e = await errorOf(response);
        if ((e.status === 404 || e.status === 405) && e.reason !== "WORKFLOWRUN_NOT_FOUND") {
          o.onState("polling", e);
          return;
        }
        if (e.status >= 500 || e.status === 429) throw e;
        o.onState("refused", e);
        return;
      }
      if (!response.body) throw new Error("the watch answered without a body");
      o.onState("live");
      for await (const ev of readEvents(response.body)) {
        if (ev.event !== "run") continue;
        lastId = ev.id;
        delay = firstDelay;
        const run = JSON.parse(ev.data) as Run;
        o.onRun(run);
        if (ended(run)) {
          o.onState("ended");
          return;
        }
      }
      // The body ended before the run did: cut short, open it again.
    } catch (e) {
      if (o.signal.aborted) return;
      o.onState("reconnecting", asApiError(e));
    }
    if (o.signal.aborted) return;
    o.onState("reconnecting");
    await wait(delay, o.signal);
    delay = Math.min(delay * 2, maxDelay);
  }
}
