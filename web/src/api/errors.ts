import type { components } from "./schema.gen";

export type ErrorBody = components["schemas"]["ErrorBody"];
export type FieldError = components["schemas"]["FieldError"];

/**
 * ApiError is a failed call, in the contract's words: the API's error body when it sent one
 * (reason, message, field errors, trace id), else what is known (the status, or that the
 * server could not be reached).
 */
export class ApiError extends Error {
  readonly status: number;
  readonly reason: string;
  readonly body: ErrorBody | undefined;

  constructor(status: number, reason: string, message: string, body?: ErrorBody) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.reason = reason;
    this.body = body;
  }

  get fieldErrors(): FieldError[] {
    return this.body?.errors ?? [];
  }

  get traceId(): string | undefined {
    return this.body?.traceId;
  }
}

export function isErrorBody(v: unknown): v is ErrorBody {
  if (typeof v !== "object" || v === null) return false;
  const o = v as Record<string, unknown>;
  return typeof o.reason === "string" && typeof o.message === "string" && typeof o.status === "number";
}

/** fromResponse makes the ApiError of an answer that is not 2xx, whatever its body. */
export function fromResponse(response: Response, body: unknown): ApiError {
  if (isErrorBody(body)) {
    return new ApiError(response.status, body.reason, body.message, body);
  }
  const text = typeof body === "string" && body.trim() !== "" ? `: ${body.trim().slice(0, 200)}` : "";
  return new ApiError(
    response.status,
    `HTTP_${response.status}`,
    `The server answered ${response.status} ${response.statusText}${text}`.trim(),
  );
}

/** unreachable is the error of a call that got no answer at all. */
export function unreachable(cause: unknown): ApiError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new ApiError(0, "UNREACHABLE", `Baton could not be reached (${detail}).`);
}

/** asApiError turns anything thrown into an ApiError, keeping one that already is. */
export function asApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  if (e instanceof DOMException && e.name === "AbortError") {
    return new ApiError(0, "ABORTED", "The request was cancelled.");
  }
  return unreachable(e);
}
