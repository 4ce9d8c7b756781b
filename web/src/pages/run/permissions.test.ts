import { describe, expect, it } from "vitest";
import type { Profile } from "../../api/profile";
import { may } from "./permissions";

const profile = (...permissions: string[]) => ({ permissions }) as Profile;

describe("may", () => {
  it.each([
    { name: "an admin", give: ["**/**"], want: true },
    { name: "a global operator", give: ["**/read", "**/write", "**/action"], want: true },
    { name: "a global reader", give: ["**/read"], want: false },
    { name: "the team's editor", give: ["infra:**/action"], want: true },
    { name: "another team's owner", give: ["other:**/**"], want: false },
    { name: "the team's reader", give: ["infra:**/read"], want: false },
    { name: "a token of the run's workflow", give: ["infra/build:workflowrun/action"], want: true },
    { name: "a token of another workflow", give: ["infra/deploy:workflowrun/action"], want: false },
    { name: "a grant of another resource", give: ["infra:workflow/action"], want: false },
    { name: "no grants", give: [], want: false },
  ])("$name", ({ give, want }) => {
    expect(may(profile(...give), "infra", "build", "workflowrun", "action")).toBe(want);
  });
  it("nothing known yet", () => {
    expect(may(undefined, "infra", "build", "workflowrun", "action")).toBe(false);
  });
});
