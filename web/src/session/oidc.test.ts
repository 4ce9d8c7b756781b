import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../api/errors";
import {
  issuerError,
  issuerHost,
  leave,
  nextOf,
  pickBearer,
  rememberSession,
  SignInError,
  signOut,
  type OIDCSignIn,
} from "./oidc";
import { getToken, setToken } from "./session";

const cfg = (bearer: OIDCSignIn["bearer"]): OIDCSignIn => ({
  issuer: "https://login.example.com:8443/realms/baton",
  clientId: "baton",
  scopes: ["openid", "email"],
  bearer,
});

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe("pickBearer", () => {
  it.each([
    { name: "the ID token when the client id is the audience", bearer: "idToken" as const, want: "id" },
    { name: "the access token when it is not", bearer: "accessToken" as const, want: "access" },
  ])("$name", ({ bearer, want }) => {
    expect(pickBearer(cfg(bearer), { id_token: "id", access_token: "access" })).toBe(want);
  });

  it("answers nothing when the issuer granted no such token", () => {
    expect(pickBearer(cfg("idToken"), { access_token: "access" })).toBeUndefined();
    expect(pickBearer(cfg("accessToken"), { id_token: "id", access_token: "" })).toBeUndefined();
  });
});

describe("issuerError", () => {
  it("says the issuer's error in its words, keeping where the sign-in was to go", () => {
    const e = issuerError(
      Object.assign(new Error("access_denied"), {
        name: "ErrorResponse",
        error: "access_denied",
        error_description: "The user said no.",
        state: { next: "/teams/infra/runs?statuses=failed" },
      }),
    );
    expect(e).toBeInstanceOf(SignInError);
    expect(e.reason).toBe("access_denied");
    expect(e.message).toBe("The user said no.");
    expect((e as SignInError).next).toBe("/teams/infra/runs?statuses=failed");
  });

  it("names an error the issuer did not describe", () => {
    const e = issuerError(Object.assign(new Error("x"), { name: "ErrorResponse", error: "server_error", error_description: null }));
    expect(e.reason).toBe("server_error");
    expect(e.message).toBe("The identity provider refused the sign-in.");
  });

  it("says what else failed (no matching state, a network error)", () => {
    const e = issuerError(new Error("No matching state found in storage"));
    expect(e.reason).toBe("OIDC_FAILED");
    expect(e.message).toContain("No matching state found in storage");
    expect((e as SignInError).next).toBe("/");
  });

  it("keeps an ApiError as it is", () => {
    const api = new ApiError(503, "SERVICE_UNAVAILABLE", "Down.");
    expect(issuerError(api)).toBe(api);
  });
});

describe("nextOf and issuerHost", () => {
  it.each([
    { give: { next: "/admin/teams" }, want: "/admin/teams" },
    { give: { next: 3 }, want: "/" },
    { give: null, want: "/" },
    { give: undefined, want: "/" },
  ])("nextOf($give) → $want", ({ give, want }) => {
    expect(nextOf(give)).toBe(want);
  });

  it("names the issuer by its host", () => {
    expect(issuerHost(cfg("idToken"))).toBe("login.example.com:8443");
  });
});

describe("signOut", () => {
  it("forgets the token and goes to /signin after a token sign-in, asking no issuer", async () => {
    const fetch = vi.fn();
    vi.stubGlobal("fetch", fetch);
    const assign = vi.spyOn(leave, "to").mockImplementation(() => {});
    setToken("btu_0123456789abcdef");
    await signOut();
    expect(getToken()).toBeNull();
    expect(fetch).not.toHaveBeenCalled();
    expect(assign).toHaveBeenCalledWith("/signin");
  });

  it("goes to /signin when the issuer cannot be asked to end its session", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => new Response("{}", { status: 503 })));
    const assign = vi.spyOn(leave, "to").mockImplementation(() => {});
    setToken("header.payload.sig");
    rememberSession({ bearer: "header.payload.sig", idToken: "header.payload.sig", next: "/" });
    await signOut();
    expect(getToken()).toBeNull();
    expect(window.localStorage.getItem("baton.oidc")).toBeNull();
    expect(assign).toHaveBeenCalledWith("/signin");
  });
});

describe("signOut after an OpenID Connect sign-in", () => {
  it("ends the issuer's session with the ID token as the hint, coming back to /signin", async () => {
    const issuer = "https://login.example.com";
    vi.stubGlobal(
      "fetch",
      vi.fn(async (input: Request | string) => {
        const url = typeof input === "string" ? input : input.url;
        if (url.endsWith("/api/v2/auth/config")) {
          return Response.json({ oidc: { issuer, clientId: "baton", scopes: ["openid"], bearer: "idToken" } });
        }
        if (url === `${issuer}/.well-known/openid-configuration`) {
          return Response.json({
            issuer,
            authorization_endpoint: `${issuer}/authorize`,
            token_endpoint: `${issuer}/token`,
            end_session_endpoint: `${issuer}/logout`,
          });
        }
        return new Response("not found", { status: 404 });
      }),
    );
    const assign = vi.spyOn(leave, "to").mockImplementation(() => {});
    setToken("the.id.token");
    rememberSession({ bearer: "the.id.token", idToken: "the.id.token", next: "/" });
    await signOut();
    expect(getToken()).toBeNull();
    expect(assign).toHaveBeenCalledTimes(1);
    const to = new URL(assign.mock.calls[0]![0]);
    expect(to.origin + to.pathname).toBe(`${issuer}/logout`);
    expect(to.searchParams.get("id_token_hint")).toBe("the.id.token");
    expect(to.searchParams.get("post_logout_redirect_uri")).toBe(`${window.location.origin}/signin`);
  });

  it("does not use what an earlier sign-in left for another token", async () => {
    const fetch = vi.fn();
    vi.stubGlobal("fetch", fetch);
    const assign = vi.spyOn(leave, "to").mockImplementation(() => {});
    rememberSession({ bearer: "an.old.token", idToken: "an.old.token", next: "/" });
    setToken("btu_0123456789abcdef");
    await signOut();
    expect(fetch).not.toHaveBeenCalled();
    expect(assign).toHaveBeenCalledWith("/signin");
  });
});
