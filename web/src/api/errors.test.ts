import { describe, expect, it } from "vitest";
import { ApiError, asApiError, fromResponse } from "./errors";
import { readLines } from "./stream";

const body = {
  timestamp: "2026-11-22T10:00:00.000Z",
  status: 400,
  error: "Bad Request",
  code: 1209,
  reason: "WORKFLOW_INVALID",
  message: "The workflow is not valid.",
  path: "/api/v2/team/infra/workflow/build",
  traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
  errors: [{ field: "tasks[2].dependencies[0].taskRef", message: "no task named 'lint'" }],
};

describe("fromResponse", () => {
  it.each([
    {
      name: "the contract's error body",
      status: 400,
      give: body,
      want: { reason: "WORKFLOW_INVALID", message: "The workflow is not valid.", fields: 1, trace: body.traceId },
    },
    {
      name: "a body that is not the contract's",
      status: 502,
      give: "<html>bad gateway</html>",
      want: { reason: "HTTP_502", message: "The server answered 502 Bad Gateway: <html>bad gateway</html>", fields: 0, trace: undefined },
    },
    {
      name: "no body",
      status: 503,
      give: undefined,
      want: { reason: "HTTP_503", message: "The server answered 503 Service Unavailable", fields: 0, trace: undefined },
    },
  ])("$name", ({ status, give, want }) => {
    const statusText: Record<number, string> = { 400: "Bad Request", 502: "Bad Gateway", 503: "Service Unavailable" };
    const e = fromResponse(new Response(null, { status, statusText: statusText[status] }), give);
    expect(e).toBeInstanceOf(ApiError);
    expect(e.status).toBe(status);
    expect(e.reason).toBe(want.reason);
    expect(e.message).toBe(want.message);
    expect(e.fieldErrors).toHaveLength(want.fields);
    expect(e.traceId).toBe(want.trace);
  });
});

describe("asApiError", () => {
  it("keeps an ApiError", () => {
    const e = new ApiError(404, "RUN_NOT_FOUND", "gone");
    expect(asApiError(e)).toBe(e);
  });
  it("names a call that got no answer", () => {
    const e = asApiError(new TypeError("Failed to fetch"));
    expect(e.reason).toBe("UNREACHABLE");
    expect(e.message).toContain("Failed to fetch");
  });
});

function streamOf(...chunks: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const ch of chunks) c.enqueue(enc.encode(ch));
      c.close();
    },
  });
}

describe("readLines", () => {
  it.each([
    { name: "lines across chunks", give: ["one\ntw", "o\nthr", "ee\n"], want: ["one", "two", "three"] },
    { name: "a last line without newline", give: ["a\nb"], want: ["a", "b"] },
    { name: "CRLF", give: ["a\r\nb\r\n"], want: ["a", "b"] },
    { name: "empty lines kept", give: ["a\n\nb\n"], want: ["a", "", "b"] },
    { name: "nothing", give: [], want: [] },
    { name: "a character split between chunks", give: ["caf\xc3", "\xa9\n"], want: ["café"] },
  ])("$name", async ({ give, want }) => {
    // The last case's chunks are bytes, not text: encode them as such.
    const chunks = give.some((g) => /[\x80-\xff]/.test(g))
      ? new ReadableStream<Uint8Array>({
          start(c) {
            for (const g of give) c.enqueue(Uint8Array.from(g, (ch) => ch.charCodeAt(0)));
            c.close();
          },
        })
      : streamOf(...give);
    const got: string[] = [];
    for await (const line of readLines(chunks)) got.push(line);
    expect(got).toEqual(want);
  });
});
