// The actions inbox: the pending count in the navigation, an approval approved with a
// comment, a manual form refused on its field when a required value is missing, then
// completed; each time the run moves on, as the API tells.
import type { APIRequestContext } from "@playwright/test";
import { apiOK, expect, test, unique } from "./fixtures";

interface Action {
  id: string;
  type: string;
  status: string;
  workflowRunRef: string;
  actioners?: { approved: boolean; comments?: string }[];
  results?: { name: string; value: unknown }[];
}
interface Run {
  id: string;
  status: string;
  tasks?: { name: string; status: string }[];
}

/** openActions waits until the team has n open actions and answers them. */
async function openActions(admin: APIRequestContext, team: string, n: number): Promise<Action[]> {
  let got: Action[] = [];
  await expect
    .poll(
      async () => {
        const page = await apiOK<{ content: Action[] }>(
          await admin.get(`/api/v2/team/${team}/action/query?statuses=submitted&limit=100`),
          "query actions",
        );
        got = page.content;
        return got.length;
      },
      { timeout: 30_000 },
    )
    .toBe(n);
  return got;
}

async function runStatus(admin: APIRequestContext, team: string, run: string): Promise<string> {
  const r = await apiOK<Run>(await admin.get(`/api/v2/team/${team}/workflowrun/${run}`), "read run");
  return r.status;
}

test("approve an approval and complete a manual form from the inbox", async ({ page, admin, signIn, step }) => {
  test.setTimeout(240_000); // two runs, two decisions and a dozen steps, each checked by axe: minutes on a busy machine
  const team = unique("e2e-actions");
  const email = `${team}@example.com`;
  await apiOK(
    await admin.post("/api/v2/team", { data: { name: team, members: [{ email, role: "editor" }] } }),
    "create team",
  );
  // Votes are a person's: a user token for the member.
  const users = await apiOK<{ content: { id: string; email: string }[] }>(await admin.get("/api/v2/user/query?limit=1000"), "users");
  const user = users.content.find((u) => u.email === email);
  expect(user, "the member's user").toBeTruthy();
  const { token } = await apiOK<{ token: string }>(
    await admin.post("/api/v2/token", { data: { type: "user", name: email, principal: user!.id } }),
    "user token",
  );

  await apiOK(
    await admin.post(`/api/v2/team/${team}/workflow`, {
      data: {
        name: "release",
        tasks: [
          { name: "start", type: "start" },
          {
            name: "approve",
            type: "approval",
            dependencies: [{ taskRef: "start" }],
            params: [{ name: "instructions", value: "Check **staging** first." }],
          },
          { name: "end", type: "end", dependencies: [{ taskRef: "approve", executionCondition: "success" }] },
        ],
      },
    }),
    "create release",
  );
  await apiOK(
    await admin.post(`/api/v2/team/${team}/workflow`, {
      data: {
        name: "hotfix",
        tasks: [
          { name: "start", type: "start" },
          {
            name: "fill",
            type: "manual",
            dependencies: [{ taskRef: "start" }],
            params: [
              { name: "instructions", value: "Which version goes out, and where?" },
              {
                name: "params",
                value: [
                  { name: "version", label: "Version", type: "text", required: true, maxValueLength: 10 },
                  {
                    name: "env",
                    label: "Environment",
                    type: "select",
                    required: true,
                    default: "staging",
                    options: [
                      { key: "staging", value: "Staging" },
                      { key: "prod", value: "Production" },
                    ],
                  },
                  { name: "secret", label: "Deploy key", type: "password" },
                ],
              },
            ],
          },
          { name: "end", type: "end", dependencies: [{ taskRef: "fill", executionCondition: "success" }] },
        ],
      },
    }),
    "create hotfix",
  );
  const submit = async (wf: string) =>
    (await apiOK<Run>(await admin.post(`/api/v2/team/${team}/workflow/${wf}/submit?start=true`, { data: {} }), `submit ${wf}`)).id;
  const releaseRun = await submit("release");
  const hotfixRun = await submit("hotfix");
  const open = await openActions(admin, team, 2);
  const approval = open.find((a) => a.type === "approval")!;
  const manual = open.find((a) => a.type === "manual")!;
  expect(approval.workflowRunRef).toBe(releaseRun);
  expect(manual.workflowRunRef).toBe(hotfixRun);

  await signIn(page, token);
  await page.goto(`/teams/${team}/actions`);
  const nav = page.getByRole("navigation", { name: "Sections" });
  await expect(nav.getByRole("link", { name: /Actions/ })).toBeVisible();
  await expect(nav.getByLabel("2 pending")).toBeVisible();
  const table = page.getByRole("table", { name: "Actions" });
  await expect(table.getByRole("row")).toHaveCount(3);
  await step("the inbox with its count");

  // Filters live in the URL: manual tasks only.
  await page.getByRole("combobox", { name: "Type" }).click();
  await page.getByRole("option", { name: "Manual tasks" }).click();
  await expect(page).toHaveURL(/type=manual/);
  await expect(table.getByRole("row")).toHaveCount(2);
  await expect(table).toContainText("hotfix");
  await step("filtered to manual tasks");

  // The approval.
  await page.goto(`/teams/${team}/actions/${approval.id}`);
  await expect(page.getByRole("heading", { name: "Approval: approve" })).toBeVisible();
  await expect(page.getByRole("link", { name: releaseRun })).toHaveAttribute("href", `/teams/${team}/runs/${releaseRun}?task=approve`);
  await expect(page.getByText("Check **staging** first.")).toBeVisible();
  await expect(page.getByText("Nobody has decided yet.")).toBeVisible();
  await step("an approval");
  await page.getByLabel("Comment").fill("staging is green");
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByRole("table", { name: "Decisions" })).toContainText("staging is green");
  await expect(page.getByRole("heading", { name: "Your decision" })).toBeHidden();
  await step("approved with a comment");
  await expect.poll(() => runStatus(admin, team, releaseRun), { timeout: 30_000 }).toBe("succeeded");
  const decided = await apiOK<Action>(await admin.get(`/api/v2/team/${team}/action/${approval.id}`), "read approval");
  expect(decided.status).toBe("approved");
  expect(decided.actioners?.[0]?.comments).toBe("staging is green");
  await expect(nav.getByLabel("1 pending")).toBeVisible();

  // The manual form: a required field left empty is refused on the field, nothing sent.
  await page.goto(`/teams/${team}/actions/${manual.id}`);
  await expect(page.getByRole("heading", { name: "Manual: fill" })).toBeVisible();
  await expect(page.getByLabel("Deploy key")).toHaveAttribute("type", "password");
  await page.getByRole("button", { name: "Complete" }).click();
  await expect(page.getByText("Version is required")).toBeVisible();
  await expect(page.getByRole("textbox", { name: "Version" })).toBeFocused();
  await step("a required field refused on the field");
  expect((await apiOK<Action>(await admin.get(`/api/v2/team/${team}/action/${manual.id}`), "read manual")).status).toBe("submitted");

  await page.getByRole("textbox", { name: "Version" }).fill("1.4.2");
  await page.getByRole("combobox", { name: "Environment" }).click();
  await page.getByRole("option", { name: "Production" }).click();
  await page.getByLabel("Deploy key").fill("s3cret");
  await page.getByLabel("Comment").fill("hotfix for the login bug");
  await step("the form filled");
  await page.getByRole("button", { name: "Complete" }).click();
  await expect(page.getByRole("table", { name: "Values given" })).toContainText("1.4.2");
  await expect(page.getByRole("table", { name: "Values given" })).toContainText("prod");
  await expect(page.getByRole("table", { name: "Values given" })).not.toContainText("s3cret");
  await step("completed");
  await expect.poll(() => runStatus(admin, team, hotfixRun), { timeout: 30_000 }).toBe("succeeded");
  const run = await apiOK<{ tasks: { name: string; results?: unknown }[] }>(
    await admin.get(`/api/v2/team/${team}/workflowrun/${hotfixRun}`),
    "read hotfix run",
  );
  expect(JSON.stringify(run.tasks.find((t) => t.name === "fill")?.results)).toContain("1.4.2");

  // Nothing waits now: the inbox says so and the count is gone.
  await page.goto(`/teams/${team}/actions`);
  await expect(page.getByText("Nothing waits for a decision.")).toBeVisible();
  await expect(nav.getByLabel(/pending/)).toHaveCount(0);
  await step("an empty inbox");
});
