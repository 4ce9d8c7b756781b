import { describe, expect, it } from "vitest";
import { jwtClaims, jwtExpiry } from "./jwt";

const b64url = (s: string) =>
  btoa(String.fromCharCode(...new TextEncoder().encode(s)))
    .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const jwt = (claims: object) => `${b64url('{"alg":"RS256"}')}.${b64url(JSON.stringify(claims))}.sig`;

describe("jwtExpiry", () => {
  it.each([
    { name: "a JWT's exp, in ms", give: jwt({ exp: 1_800_000_000, email: "ada@example.com" }), want: 1_800_000_000_000 },
    { name: "a JWT without exp", give: jwt({ email: "ada@example.com" }), want: null },
    { name: "an exp that is no number", give: jwt({ exp: "soon" }), want: null },
    { name: "Baton's opaque token", give: "btu_0123456789abcdef", want: null },
    { name: "a payload that is no JSON", give: `x.${b64url("not json")}.y`, want: null },
    { name: "a payload that is an array", give: `x.${b64url("[1]")}.y`, want: null },
    { name: "four parts", give: "a.b.c.d", want: null },
  ])("$name", ({ give, want }) => {
    expect(jwtExpiry(give)).toBe(want);
  });

  it("reads payloads with characters outside ASCII and base64url's alphabet", () => {
    expect(jwtClaims(jwt({ name: "Ada Lovelace — ÅØ ?>?" }))?.name).toBe("Ada Lovelace — ÅØ ?>?");
  });
});
