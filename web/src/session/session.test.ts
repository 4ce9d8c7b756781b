import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { clearToken, getToken, sessionExpired, setToken } from "./session";

const b64url = (s: string) => btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const jwt = (claims: object) => `${b64url('{"alg":"RS256"}')}.${b64url(JSON.stringify(claims))}.sig`;

describe("a session's expiry", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: new Date("2026-12-07T12:00:00Z") });
  });
  afterEach(() => {
    clearToken();
    vi.useRealTimers();
  });

  it("ends the session when the JWT expires, and says so", () => {
    const token = jwt({ exp: Date.parse("2026-12-07T12:10:00Z") / 1000 });
    setToken(token);
    vi.advanceTimersByTime(9 * 60_000);
    expect(getToken()).toBe(token);
    expect(sessionExpired()).toBe(false);
    vi.advanceTimersByTime(60_000);
    expect(getToken()).toBeNull();
    expect(window.localStorage.getItem("baton.token")).toBeNull();
    expect(sessionExpired()).toBe(true);
  });

  it("refuses a JWT already expired", () => {
    setToken(jwt({ exp: Date.parse("2026-12-07T11:00:00Z") / 1000 }));
    expect(getToken()).toBeNull();
    expect(sessionExpired()).toBe(true);
  });

  it("keeps Baton's opaque tokens, which say nothing of their expiry", () => {
    setToken("btu_0123456789abcdef");
    vi.advanceTimersByTime(365 * 24 * 3600_000);
    expect(getToken()).toBe("btu_0123456789abcdef");
  });

  it("forgets an earlier expiry when another token signs in, and the notice on signing in", () => {
    setToken(jwt({ exp: Date.parse("2026-12-07T11:00:00Z") / 1000 }));
    expect(sessionExpired()).toBe(true);
    setToken(jwt({ exp: Date.parse("2026-12-07T13:00:00Z") / 1000 }));
    expect(sessionExpired()).toBe(false);
    vi.advanceTimersByTime(30 * 60_000);
    expect(getToken()).not.toBeNull();
  });

  it("does not end a session signed out of and into again with a longer token", () => {
    setToken(jwt({ exp: Date.parse("2026-12-07T12:01:00Z") / 1000 }));
    clearToken();
    const later = jwt({ exp: Date.parse("2026-12-07T14:00:00Z") / 1000 });
    setToken(later);
    vi.advanceTimersByTime(5 * 60_000);
    expect(getToken()).toBe(later);
  });
});
