import { describe, expect, it } from "vitest";
import { changed } from "./AdminSettingsPage";
import { MASK, shown, toRequest } from "./ParametersPanel";
import { mayManage } from "./team";
import { expiry } from "./TokensPanel";
import type { Profile } from "../../api/profile";

describe("toRequest", () => {
  it.each([
    { name: "a text value", give: ["region", "text", "", "eu-west-1", false], want: { name: "region", type: "text", value: "eu-west-1" } },
    { name: "a number", give: ["n", "number", "", "42", false], want: { name: "n", type: "number", value: 42 } },
    { name: "a boolean", give: ["b", "boolean", "", "true", false], want: { name: "b", type: "boolean", value: true } },
    { name: "json", give: ["j", "json", "d", '{"a":1}', false], want: { name: "j", type: "json", description: "d", value: { a: 1 } } },
    { name: "a new secret", give: ["pw", "password", "", "s3cr3t", false], want: { name: "pw", type: "password", value: "s3cr3t" } },
    { name: "a secret left empty keeps the stored one", give: ["pw", "password", "", "", true], want: { name: "pw", type: "password" } },
    { name: "a secret replaced", give: ["pw", "password", "", "new", true], want: { name: "pw", type: "password", value: "new" } },
  ] as const)("$name", ({ give, want }) => {
    const [name, type, description, raw, editing] = give;
    expect(toRequest(name, type, description, raw, editing)).toEqual({ description: undefined, ...want });
  });
  it("refuses JSON that does not parse", () => {
    expect(() => toRequest("j", "json", "", "{", false)).toThrow();
  });
});

describe("shown", () => {
  it("masks a secret whatever the answer holds", () => {
    expect(shown({ name: "pw", type: "password", value: "leaked?" })).toBe(MASK);
  });
  it("writes other values as JSON when not text", () => {
    expect(shown({ name: "n", type: "number", value: 3 })).toBe("3");
    expect(shown({ name: "d", type: "text", default: "x" })).toBe("x");
  });
});

describe("changed", () => {
  const config = [
    { key: "url", type: "text" as const, value: "a" },
    { key: "on", type: "boolean" as const, value: "false" },
    { key: "n", type: "number" as const, value: "5" },
    { key: "secret", type: "secured" as const, value: MASK },
  ];
  it.each([
    { name: "nothing changed", give: { url: "a", on: "false", n: "5", secret: "" }, want: [] },
    { name: "a text", give: { url: "b", on: "false", n: "5", secret: "" }, want: [{ key: "url", value: "b" }] },
    { name: "typed values", give: { url: "a", on: "true", n: "7", secret: "" }, want: [{ key: "on", value: true }, { key: "n", value: 7 }] },
    { name: "a new secret", give: { url: "a", on: "false", n: "5", secret: "x" }, want: [{ key: "secret", value: "x" }] },
  ])("$name", ({ give, want }) => {
    expect(changed(config, give)).toEqual(want);
  });
});

describe("mayManage", () => {
  const profile = (p: Partial<Profile>): Profile => ({ permissions: [], teams: [], ...p }) as Profile;
  const team = (role: "owner" | "editor") => [{ name: "ops", displayName: "Ops", labels: {}, insights: {}, role }] as unknown as Profile["teams"];
  it.each([
    { name: "an admin", give: profile({ permissions: ["**/**"] }), want: true },
    { name: "an owner", give: profile({ principalType: "user", teams: team("owner") }), want: true },
    { name: "an editor", give: profile({ principalType: "user", teams: team("editor") }), want: false },
    { name: "a team token", give: profile({ principalType: "team", teams: team("owner") }), want: false },
    { name: "nobody", give: undefined, want: false },
  ])("$name", ({ give, want }) => {
    expect(mayManage(give, "ops")).toBe(want);
  });
});

describe("expiry", () => {
  it("is the end of the day, UTC, or none", () => {
    expect(expiry("2027-01-31")).toBe("2027-01-31T23:59:59Z");
    expect(expiry("")).toBeUndefined();
  });
});
