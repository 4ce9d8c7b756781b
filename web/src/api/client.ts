import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "./schema.gen";
import { asApiError, fromResponse } from "./errors";
import { clearToken, getToken } from "../session/session";

export type Schemas = components["schemas"];

/** authorize sends the signed-in token; a 401 on it signs out (the token was revoked or expired). */
const authorize: Middleware = {
  onRequest({ request }) {
    const token = getToken();
    if (token && !request.headers.has("Authorization")) {
      request.headers.set("Authorization", `Bearer ${token}`);
    }
    return request;
  },
  onResponse({ request, response }) {
    const token = getToken();
    if (response.status === 401 && token && request.headers.get("Authorization") === `Bearer ${token}`) {
      clearToken();
    }
    return response;
  },
};

/**
 * api is the typed client of the public API: paths are the OpenAPI document's, which all start
 * with /api/v2, so the base is this page's origin (the gateway serves both the UI and the API).
 */
export const api = createClient<paths>({
  baseUrl: window.location.origin,
  // Looked up at each call, not once: tests put their own fetch in place.
  fetch: (request) => globalThis.fetch(request),
  // Every list in the contract's queries is comma-separated (style form, explode false).
  querySerializer: { array: { style: "form", explode: false } },
});
api.use(authorize);

type Result<T> = { data?: T; error?: unknown; response: Response };

/**
 * call awaits an openapi-fetch call and answers its data, throwing an ApiError in the
 * contract's words for any answer that is not 2xx or a call that got no answer.
 *
 *   const profile = await call(api.GET("/api/v2/profile"));
 */
export async function call<T>(p: Promise<Result<T>>): Promise<T> {
  let r: Result<T>;
  try {
    r = await p;
  } catch (e) {
    throw asApiError(e);
  }
  if (!r.response.ok) {
    throw fromResponse(r.response, r.error);
  }
  return r.data as T;
}
