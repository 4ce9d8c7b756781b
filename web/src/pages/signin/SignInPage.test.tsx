import { describe, expect, it } from "vitest";
import { safeNext } from "./SignInPage";

describe("safeNext", () => {
  it.each([
    { give: null, want: "/" },
    { give: "/teams/infra/runs?statuses=failed", want: "/teams/infra/runs?statuses=failed" },
    { give: "https://evil.example/", want: "/" },
    { give: "//evil.example/", want: "/" },
    { give: "/\\evil.example/", want: "/" },
    { give: "javascript:alert(1)", want: "/" },
  ])("$give → $want", ({ give, want }) => {
    expect(safeNext(give)).toBe(want);
  });
});
