import { describe, expect, it } from "vitest";
import { readEvents, type ServerEvent } from "./sse";

function streamOf(...chunks: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const ch of chunks) c.enqueue(enc.encode(ch));
      c.close();
    },
  });
}

describe("readEvents", () => {
  it.each<{ name: string; give: string[]; want: ServerEvent[] }>([
    {
      name: "the run watch's events",
      give: ['id: a1\nevent: run\ndata: {"id":"r","status":"running"}\n\n', 'id: a2\nevent: run\ndata: {"id":"r"}\n\n'],
      want: [
        { id: "a1", event: "run", data: '{"id":"r","status":"running"}' },
        { id: "a2", event: "run", data: '{"id":"r"}' },
      ],
    },
    {
      name: "an event split across chunks, keep-alive comments between",
      give: [": keep-alive\n\nid: x\nev", "ent: run\nda", "ta: 1\n", "\n: keep-alive\n\n"],
      want: [{ id: "x", event: "run", data: "1" }],
    },
    {
      name: "data lines joined, no space after the colon, CRLF",
      give: ["data:a\r\ndata: b\r\n\r\n"],
      want: [{ id: "", event: "message", data: "a\nb" }],
    },
    {
      name: "the id carries over until set again",
      give: ["id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n"],
      want: [
        { id: "7", event: "message", data: "a" },
        { id: "7", event: "message", data: "b" },
        { id: "", event: "message", data: "c" },
      ],
    },
    {
      name: "an event without data and an unfinished one are not dispatched",
      give: ["event: run\n\nretry: 10\ndata: cut"],
      want: [],
    },
    { name: "a byte order mark", give: ["\ufeffdata: x\n\n"], want: [{ id: "", event: "message", data: "x" }] },
  ])("$name", async ({ give, want }) => {
    const got: ServerEvent[] = [];
    for await (const e of readEvents(streamOf(...give))) got.push(e);
    expect(got).toEqual(want);
  });
});
