import { describe, expect, it } from "vitest";
import { watchRun, type WatchState } from "./watch";
import type { Run } from "./status";

const enc = new TextEncoder();

function sse(...runs: { id: string; run: Partial<Run> }[]): Response {
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(enc.encode(": keep-alive\n\n"));
      for (const r of runs) c.enqueue(enc.encode(`id: ${r.id}\nevent: run\ndata: ${JSON.stringify(r.run)}\n\n`));
      c.close();
    },
  });
  return new Response(body, { status: 200, headers: { "Content-Type": "text/event-stream" } });
}

function errorResponse(status: number, reason: string): Response {
  return new Response(JSON.stringify({ status, reason, message: `${reason} here`, error: "x", timestamp: "", path: "" }), {
    status,
    headers: { "Content-Type": "application/json" },
  });
}

/** run watches with answers given in turn, and says what was asked, seen and reported. */
async function run(answers: (Response | Error)[]) {
  const asked: { url: string; lastId: string | null }[] = [];
  const seen: string[] = [];
  const states: WatchState[] = [];
  const reasons: string[] = [];
  const ac = new AbortController();
  await watchRun({
    team: "infra",
    runId: "r1",
    signal: ac.signal,
    onRun: (r) => seen.push(`${r.status}/${r.phase}`),
    onState: (s, e) => {
      states.push(s);
      if (e) reasons.push(e.reason);
    },
    wait: async () => {},
    fetch: async (input, init) => {
      asked.push({ url: String(input), lastId: new Headers(init?.headers).get("Last-Event-ID") });
      const a = answers.shift();
      if (!a) {
        ac.abort();
        throw new DOMException("aborted", "AbortError");
      }
      if (a instanceof Error) throw a;
      return a;
    },
  });
  return { asked, seen, states, reasons };
}

describe("watchRun", () => {
  it("follows the run until an event says it ended", async () => {
    const got = await run([
      sse(
        { id: "s1", run: { status: "running", phase: "running" } },
        { id: "s2", run: { status: "succeeded", phase: "completed" } },
        { id: "s3", run: { status: "succeeded", phase: "finalized" } },
      ),
    ]);
    expect(got.asked).toEqual([{ url: "/api/v2/team/infra/workflowrun/r1/watch", lastId: null }]);
    expect(got.seen).toEqual(["running/running", "succeeded/completed"]);
    expect(got.states).toEqual(["connecting", "live", "ended"]);
  });

  it("opens a cut stream again with the last event's id", async () => {
    const got = await run([
      sse({ id: "s1", run: { status: "running", phase: "running" } }),
      new TypeError("network error"),
      errorResponse(503, "SERVICE_UNAVAILABLE"),
      sse({ id: "s2", run: { status: "failed", phase: "completed" } }),
    ]);
    expect(got.asked.map((a) => a.lastId)).toEqual([null, "s1", "s1", "s1"]);
    expect(got.seen).toEqual(["running/running", "failed/completed"]);
    expect(got.states.at(-1)).toBe("ended");
    expect(got.reasons).toEqual(["UNREACHABLE", "SERVICE_UNAVAILABLE"]);
  });

  it.each([
    { name: "a server without the watch route polls", give: errorResponse(404, "NOT_FOUND"), want: "polling" },
    { name: "a run that does not exist stops", give: errorResponse(404, "WORKFLOWRUN_NOT_FOUND"), want: "refused" },
    { name: "a forbidden run stops", give: errorResponse(403, "FORBIDDEN"), want: "refused" },
  ])("$name", async ({ give, want }) => {
    const got = await run([give]);
    expect(got.asked).toHaveLength(1);
    expect(got.states).toEqual(["connecting", want]);
  });
});
