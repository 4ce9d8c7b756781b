import { getToken } from "../session/session";
import { asApiError, fromResponse } from "./errors";

/**
 * readLines yields the lines of a body as they arrive (without their line ends), the last
 * one even without a final newline.
 */
export async function* readLines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let rest = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = rest.indexOf("\n")) >= 0) {
        yield rest.slice(0, nl).replace(/\r$/, "");
        rest = rest.slice(nl + 1);
      }
    }
    rest += decoder.decode();
    if (rest !== "") yield rest;
  } finally {
    reader.releaseLock();
  }
}

/**
 * follow reads a followed stream of the API (a task run's log with follow=true, say) line by
 * line with the signed-in token, calling onLine for each, until the server ends it or signal
 * aborts. EventSource cannot send Authorization, hence fetch. It throws an ApiError for an
 * answer that is not 2xx; an abort ends it quietly.
 */
export async function follow(path: string, onLine: (line: string) => void, signal?: AbortSignal): Promise<void> {
  const headers = new Headers();
  const token = getToken();
  if (token) headers.set("Authorization", `Bearer ${token}`);
  let response: Response;
  try {
    response = await fetch(path, { headers, signal });
  } catch (e) {
    if (signal?.aborted) return;
    throw asApiError(e);
  }
  if (!response.ok) {
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON: fromResponse quotes the text.
    }
    throw fromResponse(response, body);
  }
  if (!response.body) return;
  try {
    for await (const line of readLines(response.body)) onLine(line);
  } catch (e) {
    if (signal?.aborted) return;
    throw asApiError(e);
  }
}
