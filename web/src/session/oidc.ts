// Signing in with the OpenID Connect issuer the gateway names (GET /api/v2/auth/config): the
// authorization code flow with PKCE, as a public client, through oidc-client-ts. The library
// is imported only when a sign-in starts, completes or ends, so the first load stays small.
//
// The issuer sends the browser back to /signin/callback with a code, which is exchanged for
// tokens at the issuer's token endpoint (from the page: the UI's Content-Security-Policy
// allows the issuer's origin). The session's bearer is the token the gateway says to send:
// the ID token when the client id is the audience it checks, else the access token. The ID
// token is kept beside it as the hint for the issuer's end-session endpoint.
import type { OidcClient, SigninResponse } from "oidc-client-ts";
import { api, call, type Schemas } from "../api/client";
import { ApiError } from "../api/errors";
import { clearToken, getToken } from "./session";
import { jwtExpiry } from "./jwt";

export type AuthConfig = Schemas["AuthConfig"];
export type OIDCSignIn = Schemas["OIDCSignIn"];

/** callbackPath is where the issuer sends the browser back: the redirect URI to register. */
export const callbackPath = "/signin/callback";

const KEY = "baton.oidc";

/** OIDCSession is what is kept of an OpenID Connect sign-in beside the token. */
interface OIDCSession {
  /** The bearer it is about, so that what another sign-in left behind is never used. */
  bearer: string;
  idToken?: string;
}

export const authConfigKey = ["authConfig"] as const;

/** leave loads another page: the issuer's, or a fresh one of this UI (tests replace it). */
export const leave = {
  to(url: string) {
    window.location.assign(url);
  },
};

/** fetchAuthConfig reads how this server signs browsers in. */
export function fetchAuthConfig(): Promise<AuthConfig> {
  return call(api.GET("/api/v2/auth/config"));
}

/** issuerHost is what the sign-in button names: the issuer's host. */
export function issuerHost(cfg: OIDCSignIn): string {
  try {
    return new URL(cfg.issuer).host;
  } catch {
    return cfg.issuer;
  }
}

async function client(cfg: OIDCSignIn): Promise<OidcClient> {
  const { OidcClient, WebStorageStateStore } = await import("oidc-client-ts");
  const origin = window.location.origin;
  return new OidcClient({
    authority: cfg.issuer,
    client_id: cfg.clientId,
    redirect_uri: origin + callbackPath,
    post_logout_redirect_uri: origin + "/signin",
    response_type: "code",
    scope: cfg.scopes.join(" "),
    // The flow's state and PKCE verifier live only until the issuer sends this tab back.
    stateStore: new WebStorageStateStore({ store: window.sessionStorage }),
  });
}

/** startSignIn sends the browser to the issuer, to come back to next after signing in. */
export async function startSignIn(cfg: OIDCSignIn, next: string): Promise<void> {
  let url: string;
  try {
    const req = await (await client(cfg)).createSigninRequest({ state: { next } });
    url = req.url;
  } catch (e) {
    throw issuerError(e);
  }
  leave.to(url);
}

/** SignedIn is a completed sign-in: the bearer to keep and where to go. */
export interface SignedIn {
  bearer: string;
  idToken?: string;
  next: string;
}

/**
 * completeSignIn reads the issuer's answer at the callback URL: the tokens for a code, or the
 * issuer's error, thrown as an ApiError whose reason is the OAuth error (access_denied…).
 * The bearer is not checked with the gateway here; the caller does it (GET /profile, which
 * registers a first-time user).
 */
export async function completeSignIn(url: string): Promise<SignedIn> {
  const cfg = (await fetchAuthConfig()).oidc;
  if (!cfg) {
    throw new ApiError(0, "OIDC_OFF", "This server does not sign in with OpenID Connect; sign in with a token.");
  }
  let res: SigninResponse;
  try {
    res = await (await client(cfg)).processSigninResponse(url);
  } catch (e) {
    throw issuerError(e);
  }
  const bearer = pickBearer(cfg, res);
  if (!bearer) {
    const which = cfg.bearer === "accessToken" ? "access token" : "ID token";
    throw new ApiError(0, "OIDC_NO_TOKEN", `The issuer granted no ${which}, which this server signs in with.`);
  }
  const exp = jwtExpiry(bearer);
  if (exp !== null && exp <= Date.now()) {
    throw new ApiError(0, "OIDC_TOKEN_EXPIRED", "The issuer granted a token that has already expired; check this computer's clock.");
  }
  return { bearer, idToken: res.id_token, next: nextOf(res.userState) };
}

/** pickBearer is the granted token the gateway checks: the ID token or the access token. */
export function pickBearer(cfg: OIDCSignIn, res: { id_token?: string; access_token?: string }): string | undefined {
  return (cfg.bearer === "accessToken" ? res.access_token : res.id_token) || undefined;
}

/** nextOf is the return path a sign-in carried in its state. */
export function nextOf(state: unknown): string {
  const next = (state as { next?: unknown } | null | undefined)?.next;
  return typeof next === "string" ? next : "/";
}

/** SignInError is a failed OpenID Connect sign-in, with where it was to go. */
export class SignInError extends ApiError {
  readonly next: string;

  constructor(reason: string, message: string, next: string) {
    super(0, reason, message);
    this.next = next;
  }
}

/**
 * issuerError is a failure of the flow in the issuer's words when it sent some: the OAuth
 * error as the reason (access_denied…) and its description as the message.
 */
export function issuerError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  const r = e as { name?: unknown; error?: unknown; error_description?: unknown; message?: unknown; state?: unknown } | null;
  const next = nextOf(r?.state);
  if (r && r.name === "ErrorResponse" && typeof r.error === "string") {
    const desc =
      typeof r.error_description === "string" && r.error_description !== ""
        ? r.error_description
        : "The identity provider refused the sign-in.";
    return new SignInError(r.error, desc, next);
  }
  const msg = r && typeof r.message === "string" ? r.message : String(e);
  return new SignInError("OIDC_FAILED", `Signing in with the identity provider failed: ${msg}`, next);
}

/** rememberSession keeps the ID token of the sign-in whose bearer is now the session's. */
export function rememberSession(s: SignedIn) {
  const v: OIDCSession = { bearer: s.bearer, idToken: s.idToken };
  try {
    window.localStorage.setItem(KEY, JSON.stringify(v));
  } catch {
    // Storage refused: signing out will not end the issuer's session.
  }
}

function session(): OIDCSession | null {
  try {
    const raw = window.localStorage.getItem(KEY);
    const v = raw === null ? null : (JSON.parse(raw) as OIDCSession);
    return v && v.bearer === getToken() ? v : null;
  } catch {
    return null;
  }
}

/**
 * signOut forgets the token and, after an OpenID Connect sign-in, ends the issuer's session
 * too when the issuer has an end-session endpoint, which sends the browser back to /signin.
 * Otherwise, or when the issuer cannot be asked, it goes to /signin at once.
 */
export async function signOut(): Promise<void> {
  const s = session();
  let url = "/signin";
  if (s) {
    try {
      const cfg = (await fetchAuthConfig()).oidc;
      if (cfg) {
        const req = await (await client(cfg)).createSignoutRequest({ id_token_hint: s.idToken });
        url = req.url;
      }
    } catch {
      // No end-session endpoint, or the issuer is down: this browser is signed out anyway.
    }
  }
  try {
    window.localStorage.removeItem(KEY);
  } catch {
    // Nothing stored.
  }
  clearToken();
  // A fresh page: nothing read with the token stays in memory.
  leave.to(url);
}
