// The run page: a run's DAG turning from running to green as the run moves on, its log
// arriving while a task runs, the actions inbox linked from an approval, child runs linked
// both ways, the timeline; cancel, retry from failure and run again with a changed param.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { APIRequestContext, Page } from "@playwright/test";
import { apiOK, expect, test, unique } from "./fixtures";

interface TaskRun {
  id: string;
  name: string;
  status: string;
  startTime?: string;
  duration?: number;
}
interface Run {
  id: string;
  status: string;
  phase: string;
  tasks?: TaskRun[];
}

const script = (name: string, after: string, value: string, extra: object = {}) => ({
  name,
  type: "script",
  dependencies: [{ taskRef: after }],
  params: [{ name: "script", value }],
  ...extra,
});

/** setUp makes a team with three workflows: `deliver` (waits on a file, an approval, a child run), `child`, and `check` (fails on a param). */
async function setUp(admin: APIRequestContext) {
  const team = unique("e2e-run");
  // Votes are a person's: the team has a member, who approves with a user token.
  await apiOK(await admin.post("/api/v2/team", { data: { name: team, members: [{ email: `${team}@example.com`, role: "editor" }] } }), "create team");
  const save = async (body: object) => apiOK(await admin.post(`/api/v2/team/${team}/workflow`, { data: body }), "create workflow");
  await save({
    name: "child",
    tasks: [
      { name: "start", type: "start" },
      script("hello", "start", "echo hello from the child"),
      { name: "end", type: "end", dependencies: [{ taskRef: "hello" }] },
    ],
  });
  await save({
    name: "deliver",
    params: [
      { name: "gate", type: "text", required: true },
      { name: "mood", type: "text", default: "calm" },
    ],
    tasks: [
      { name: "start", type: "start" },
      // Prints a line every 100 ms until its file exists (for two minutes at most): the log
      // arrives while it runs.
      script(
        "prepare",
        "start",
        'i=0; while [ ! -f "$(params.gate)" ] && [ $i -lt 1200 ]; do i=$((i+1)); echo "tick $i"; sleep 0.1; done; test -f "$(params.gate)" && echo "gate open"',
      ),
      { name: "approve", type: "approval", dependencies: [{ taskRef: "prepare", executionCondition: "success" }] },
      {
        name: "package",
        type: "runworkflow",
        dependencies: [{ taskRef: "approve", executionCondition: "success" }],
        params: [{ name: "workflowRef", value: "child" }],
      },
      script("rollback", "approve", "echo rolling back", { dependencies: [{ taskRef: "approve", executionCondition: "failure" }] }),
      { name: "end", type: "end", join: "any", dependencies: [{ taskRef: "package" }, { taskRef: "rollback" }] },
    ],
  });
  await save({
    name: "check",
    params: [{ name: "outcome", type: "text", default: "fail" }],
    tasks: [
      { name: "start", type: "start" },
      script("build", "start", "echo built"),
      script("verify", "build", 'echo "outcome $(params.outcome)"; [ "$(params.outcome)" = pass ]'),
      { name: "end", type: "end", dependencies: [{ taskRef: "verify" }] },
    ],
  });
  return team;
}

async function submit(admin: APIRequestContext, team: string, workflow: string, params: object): Promise<Run> {
  return apiOK<Run>(await admin.post(`/api/v2/team/${team}/workflow/${workflow}/submit?start=true`, { data: { params } }), `submit ${workflow}`);
}

async function readRun(admin: APIRequestContext, team: string, id: string): Promise<Run> {
  return apiOK<Run>(await admin.get(`/api/v2/team/${team}/workflowrun/${id}`), "read run");
}

const node = (page: Page, name: string) => page.locator(`.react-flow__node [data-task="${name}"]`);

// Each flow makes runs and waits on them: three times the default timeout.
test.slow();

test("a run's DAG, log, approval and child run, live", async ({ page, admin, signIn, step }) => {
  const team = await setUp(admin);
  const gate = path.join(mkdtempSync(path.join(tmpdir(), "baton-e2e-")), "open");
  const run = await submit(admin, team, "deliver", { gate });

  await signIn(page);
  await page.goto(`/teams/${team}/runs/${run.id}`);
  await expect(page.getByRole("heading", { name: "deliver" })).toBeVisible();
  await expect(node(page, "prepare")).toHaveAttribute("data-status", "running", { timeout: 30_000 });
  await expect(node(page, "approve")).toHaveAttribute("data-status", /notstarted|ready/);
  await expect(page.getByText("on success").first()).toBeVisible();
  await expect(page.getByText("on failure")).toBeVisible();
  await step("the DAG while a task runs");

  await node(page, "prepare").click();
  await expect(page).toHaveURL(/\?task=prepare$/);
  const log = page.getByRole("log", { name: "Log of task prepare" });
  await expect(log).toContainText("tick 3");
  await expect(page.getByRole("button", { name: "Latest lines" })).toHaveCount(0);
  // The log keeps growing while the task runs.
  const ticks = async () => ((await log.textContent()) ?? "").split("\n").filter((l) => l.startsWith("tick")).length;
  const before = await ticks();
  await expect.poll(ticks).toBeGreaterThan(before + 3);
  await step("the log arriving while the task runs");
  // Scrolled up, the log stays where the reader is until asked for the latest lines.
  await log.evaluate((el) => el.scrollTo({ top: 0 }));
  const latest = page.getByRole("button", { name: "Latest lines" });
  await expect(latest).toBeVisible();
  await latest.click();
  await expect(latest).toHaveCount(0);

  // Measure: the task's end in the API to the node's colour on the page.
  await page.evaluate(() => {
    const w = window as unknown as { greenAt?: number };
    const el = document.querySelector('.react-flow__node [data-task="prepare"]');
    new MutationObserver((_, o) => {
      if (el?.getAttribute("data-status") === "succeeded") {
        w.greenAt = Date.now();
        o.disconnect();
      }
    }).observe(el!, { attributes: true, attributeFilter: ["data-status"] });
  });
  writeFileSync(gate, "");
  await expect(node(page, "prepare")).toHaveAttribute("data-status", "succeeded");
  await expect(log).toContainText("gate open");
  const greenAt = await page.evaluate(() => (window as unknown as { greenAt?: number }).greenAt ?? 0);
  const prepared = (await readRun(admin, team, run.id)).tasks?.find((t) => t.name === "prepare");
  const endedAt = Date.parse(prepared?.startTime ?? "") + (prepared?.duration ?? 0);
  console.log(`run page: task 'prepare' ended at ${new Date(endedAt).toISOString()} (API), its node turned green ${greenAt - endedAt} ms later`);

  await expect(node(page, "approve")).toHaveAttribute("data-status", "waiting");
  await expect(node(page, "approve")).toContainText("waits for approval");
  // A node is selected from the keyboard too.
  await node(page, "approve").press("Enter");
  await expect(page).toHaveURL(/\?task=approve$/);
  const inbox = page.getByRole("link", { name: "Approve or reject it in the actions inbox" });
  await expect(inbox).toBeVisible();
  await step("an approval waiting, linked to the actions inbox");

  const actionId = (await inbox.getAttribute("href"))?.split("/").pop() ?? "";
  const users = await apiOK<{ content: { id: string; email: string }[] }>(await admin.get("/api/v2/user/query?limit=1000"), "users");
  const member = users.content.find((u) => u.email === `${team}@example.com`);
  const { token } = await apiOK<{ token: string }>(
    await admin.post("/api/v2/token", { data: { type: "user", name: team, principal: member?.id } }),
    "user token",
  );
  await apiOK(
    await admin.put(`/api/v2/team/${team}/action`, {
      data: [{ id: actionId, approved: true, comments: "e2e" }],
      headers: { Authorization: `Bearer ${token}` },
    }),
    "approve",
  );
  await expect(node(page, "package")).toHaveAttribute("data-status", "succeeded");
  await expect(node(page, "end")).toHaveAttribute("data-status", "succeeded");
  await expect(node(page, "rollback")).toHaveAttribute("data-status", "skipped");
  await expect(page.getByRole("main").getByText("succeeded", { exact: true }).first()).toBeVisible();
  await expect(page.getByLabel("Updates: Ended")).toBeVisible();
  await step("the run succeeded, every node green but the skipped one");

  await page.getByRole("tab", { name: "Timeline" }).click();
  await expect(page).toHaveURL(/view=timeline/);
  await expect(page.getByRole("button", { name: /^Task prepare: succeeded/ })).toBeVisible();
  await step("the timeline");

  await page.getByRole("button", { name: /^Task package:/ }).click();
  const childLink = page.getByRole("region", { name: "Task package" }).getByRole("link");
  await expect(childLink).toBeVisible();
  await childLink.click();
  await expect(page.getByRole("heading", { name: "child" })).toBeVisible();
  await expect(page.getByText("Child run of")).toBeVisible();
  await step("the child run, linked to its parent");
  await expect(page.getByRole("link", { name: "package", exact: true })).toHaveAttribute("href", `/teams/${team}/runs/${run.id}?task=package`);
});

test("cancel a run, retry a failed one from failure, run one again with a changed param", async ({ page, admin, signIn, step }) => {
  const team = await setUp(admin);
  const gate = path.join(mkdtempSync(path.join(tmpdir(), "baton-e2e-")), "never");
  const waiting = await submit(admin, team, "deliver", { gate });

  await signIn(page);
  await page.goto(`/teams/${team}/runs/${waiting.id}`);
  await expect(node(page, "prepare")).toHaveAttribute("data-status", "running", { timeout: 30_000 });
  await page.getByRole("button", { name: "Cancel run" }).click();
  await step("asked to confirm the cancel");
  await page.getByRole("button", { name: "Cancel the run" }).click();
  await expect(node(page, "prepare")).toHaveAttribute("data-status", "cancelled");
  await expect(node(page, "approve")).toHaveAttribute("data-status", "skipped");
  await expect(page.getByRole("button", { name: "Cancel run" })).toHaveCount(0);
  await step("the run cancelled");

  const failed = await submit(admin, team, "check", {});
  await page.goto(`/teams/${team}/runs/${failed.id}`);
  await expect(node(page, "verify")).toHaveAttribute("data-status", "failed");
  await expect(node(page, "build")).toHaveAttribute("data-status", "succeeded");
  await step("a failed run");

  await page.getByRole("button", { name: "Retry from failure" }).click();
  await expect(page).not.toHaveURL(new RegExp(failed.id));
  await expect(page.getByText(`Retry of run ${failed.id}`)).toBeVisible();
  await expect(node(page, "verify")).toHaveAttribute("data-status", "failed");
  await node(page, "build").click();
  await expect(page.getByRole("region", { name: "Task build" })).toContainText(`kept from run ${failed.id}`);
  await step("retried from failure: what succeeded is kept");

  await page.getByRole("button", { name: "Run again…" }).click();
  const dialog = page.getByRole("dialog", { name: "Run check again" });
  const outcome = dialog.getByLabel("outcome");
  await expect(outcome).toHaveValue("fail");
  await outcome.fill("pass");
  await step("run again with a changed param", page);
  await dialog.getByRole("button", { name: "Submit the run" }).click();
  await expect(dialog).toHaveCount(0);
  await expect(node(page, "verify")).toHaveAttribute("data-status", "succeeded");
  await expect(page.getByRole("tab", { name: "Params and results" })).toBeVisible();
  await page.getByRole("tab", { name: "Params and results" }).click();
  await expect(page.getByRole("tabpanel")).toContainText("pass");
  await step("the new run succeeded with the changed param");
});
