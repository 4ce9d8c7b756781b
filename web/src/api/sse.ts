import { readLines } from "./stream";

/** ServerEvent is one Server-Sent Event: its type (`message` when unnamed), data and id. */
export interface ServerEvent {
  event: string;
  data: string;
  /** The last id the stream set, this event's or an earlier one's ("" when none). */
  id: string;
}

/**
 * readEvents yields the Server-Sent Events of a body as they arrive, parsed as the HTML
 * standard says: `field: value` lines (one optional space after the colon), data lines
 * joined with newlines, an event dispatched at an empty line, comments (`: keep-alive`)
 * skipped, an event without data not dispatched, and an unfinished event at the end of
 * the body dropped. The id carries over to later events until the stream sets another.
 */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerEvent> {
  let id = "";
  let event = "";
  let data: string[] = [];
  let first = true;
  for await (let line of readLines(body)) {
    if (first) {
      first = false;
      if (line.startsWith("\ufeff")) line = line.slice(1);
    }
    if (line === "") {
      if (data.length > 0) yield { event: event || "message", data: data.join("\n"), id };
      event = "";
      data = [];
      continue;
    }
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "event":
        event = value;
        break;
      case "data":
        data.push(value);
        break;
      case "id":
        if (!value.includes("\0")) id = value;
        break;
      default:
      // retry and unknown fields: nothing to do (reconnecting is the caller's).
    }
  }
}
