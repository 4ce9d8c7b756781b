// The workflows list and the designer: a workflow built from scratch (tasks from the
// catalogue, edges, a condition, params, a YAML edit), saved twice with notes, its versions
// compared; a validation error on its node. The drag on a 200-task workflow is measured in
// designer-scale.spec.ts.
import type { Page } from "@playwright/test";
import { settled } from "./canvas";
import { apiOK, expect, test, unique } from "./fixtures";

interface Task {
  name: string;
  type: string;
  taskRef?: string;
  params?: { name: string; value: unknown }[];
  dependencies?: { taskRef: string; executionCondition?: string }[];
}

/** connect drags from the bottom handle of one task to the top handle of another. */
async function connect(page: Page, from: string, to: string) {
  const src = page.getByTestId(`task-${from}`).locator(".react-flow__handle.source");
  const dst = page.getByTestId(`task-${to}`).locator(".react-flow__handle.target");
  const a = await src.boundingBox();
  const b = await dst.boundingBox();
  if (!a || !b) throw new Error(`handles of ${from} or ${to} are not on screen`);
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 12 });
  await page.mouse.up();
  await expect(page.getByTestId(`rf__edge-${from}->${to}`)).toHaveCount(1);
}

/** fitView shows every task, and waits until the canvas stops moving before handles are read. */
async function fitView(page: Page) {
  await page.getByRole("button", { name: /fit view/i }).click();
  // One step back, so that no handle lies under the overview or the controls.
  await page.getByRole("button", { name: /zoom out/i }).click();
  await settled(page);
}

test.describe.configure({ timeout: 300_000 });

test("a workflow designed from scratch, saved twice and compared; a problem shown on its node", async ({ page, admin, signIn, step }) => {
  const team = unique("e2e-wf");
  await apiOK(await admin.post("/api/v2/team", { data: { name: team } }), `create team ${team}`);
  await signIn(page);

  await page.goto(`/teams/${team}/workflows`);
  await expect(page.getByRole("heading", { name: "Workflows" })).toBeVisible();
  await expect(page.getByText("No workflows yet")).toBeVisible();
  await step("no workflows yet");

  await page.getByRole("button", { name: "New workflow" }).click();
  await page.getByRole("textbox", { name: "Name" }).fill("Release Flow");
  await expect(page.getByText("Saved as release-flow")).toBeVisible();
  await page.getByRole("button", { name: "Open the designer" }).click();
  await expect(page).toHaveURL(new RegExp(`/teams/${team}/workflows/release-flow\\?new=1`));
  // The designer's chunk is the largest of the UI: give it time on a busy machine.
  await expect(page.getByTestId("task-start")).toBeVisible({ timeout: 30_000 });
  await expect(page.getByTestId("task-end")).toBeVisible();
  await step("a new workflow: start and end");

  // Two tasks from the catalogue: one found by search, one by its category.
  await page.getByRole("textbox", { name: "Search the catalogue" }).fill("shell");
  await page.getByRole("button", { name: "Add Execute shell" }).click();
  await expect(page.getByTestId("task-execute-shell")).toBeVisible();
  await page.getByRole("textbox", { name: "Search the catalogue" }).fill("");
  await page.getByRole("radiogroup", { name: "Category" }).getByText("workflow", { exact: true }).click();
  await page.getByRole("button", { name: "Add Set result parameter" }).click();
  await expect(page.getByTestId("task-set-result-parameter")).toBeVisible();
  await expect(page).toHaveURL(/task=set-result-parameter/);
  await step("two tasks added from the catalogue");

  await fitView(page);
  await connect(page, "start", "execute-shell");
  await connect(page, "execute-shell", "set-result-parameter");
  await connect(page, "set-result-parameter", "end");
  await expect(page.locator(".react-flow__edge")).toHaveCount(4);

  // The form built from the catalogue task's parameter definitions.
  await page.getByTestId("task-set-result-parameter").click();
  await expect(page.getByRole("heading", { name: "Task set-result-parameter" })).toBeVisible();
  await page.getByRole("textbox", { name: "Result name" }).fill("greeting");
  await page.getByRole("textbox", { name: "Value" }).fill("$(tasks.execute-shell.results.out)");
  await page.getByTestId("task-execute-shell").click();
  await expect(page.getByRole("heading", { name: "Task execute-shell" })).toBeVisible();
  await page.getByRole("textbox", { name: "Script" }).fill("echo hello");
  await step("params set in the form");

  // A condition, edited on the edge.
  await page.getByTestId("rf__edge-execute-shell->set-result-parameter").click({ force: true });
  await expect(page.getByRole("heading", { name: "Edge execute-shell → set-result-parameter" })).toBeVisible();
  await page.getByText("succeeds").click();
  const label = page.getByRole("button", { name: /Condition of execute-shell to set-result-parameter/ });
  await expect(label).toHaveText("success");
  await step("a condition on an edge");

  // The YAML view follows, and the graph follows the YAML.
  await page.getByRole("tab", { name: "YAML" }).click();
  await expect(page.locator(".cm-content")).toContainText("name: release-flow", { timeout: 30_000 });
  // The edge's condition is near the end of the document: go there, so the editor draws it.
  await page.locator(".cm-content").click();
  await page.keyboard.press("Control+End");
  const line = page.locator(".cm-line", { hasText: "executionCondition: success" });
  await expect(line).toBeVisible();
  await line.click();
  await page.keyboard.press("End");
  for (let i = 0; i < "success".length; i++) await page.keyboard.press("Backspace");
  await page.keyboard.type("failure");
  await expect(label).toHaveText("failure");
  await step("edited in the YAML, the graph follows");

  // A YAML that does not parse leaves the graph as it was.
  await page.keyboard.type(": [");
  await expect(page.getByRole("alert").filter({ hasText: "does not parse" })).toBeVisible();
  await expect(label).toHaveText("failure");
  for (let i = 0; i < 3; i++) await page.keyboard.press("Backspace");
  await expect(page.getByRole("alert").filter({ hasText: "does not parse" })).toHaveCount(0);

  await page.getByRole("button", { name: "Save…" }).click();
  await page.getByRole("textbox", { name: "Changelog note" }).fill("First cut of the release");
  await page.getByRole("button", { name: "Save version" }).click();
  await expect(page.getByText("Saved as version 1.")).toBeVisible();
  await expect(page.getByText("version 1", { exact: true })).toBeVisible();
  await expect(page).not.toHaveURL(/new=1/);
  await step("saved as version 1");

  const v1 = await apiOK<{ version: number; tasks: Task[]; changelog: { reason: string } }>(
    await admin.get(`/api/v2/team/${team}/workflow/release-flow`),
    "read the workflow",
  );
  expect(v1.version).toBe(1);
  expect(v1.changelog.reason).toBe("First cut of the release");
  expect(v1.tasks.map((t) => t.name).sort()).toEqual(["end", "execute-shell", "set-result-parameter", "start"]);
  const shell = v1.tasks.find((t) => t.name === "execute-shell");
  expect(shell?.type).toBe("script");
  expect(shell?.params).toContainEqual({ name: "script", value: "echo hello" });
  const result = v1.tasks.find((t) => t.name === "set-result-parameter");
  expect(result?.params).toContainEqual({ name: "output", value: "greeting" });
  expect(result?.dependencies).toEqual([{ taskRef: "execute-shell", executionCondition: "failure" }]);

  // Edit and save again (the inspector stays on the YAML tab until told otherwise).
  await page.getByTestId("task-execute-shell").click();
  await page.getByRole("tab", { name: "Task" }).click();
  await page.getByRole("textbox", { name: "Script" }).fill("echo changed");
  await page.getByRole("button", { name: "Save…" }).click();
  await page.getByRole("textbox", { name: "Changelog note" }).fill("Say something else");
  await page.getByRole("button", { name: "Save version" }).click();
  await expect(page.getByText("Saved as version 2.")).toBeVisible();
  await step("saved as version 2");

  await page.getByRole("link", { name: "History" }).click();
  await expect(page.getByRole("heading", { name: "History of release-flow" })).toBeVisible();
  await expect(page.getByRole("cell", { name: "First cut of the release" })).toBeVisible();
  await expect(page.getByRole("cell", { name: "Say something else" })).toBeVisible();
  await step("the history with its notes");

  await page.getByRole("button", { name: "Compare version 1 with version 2" }).click();
  await expect(page).toHaveURL(/\/diff\?from=1&to=2$/);
  const diff = page.getByTestId("yaml-diff");
  await expect(diff).toContainText("echo hello", { timeout: 30_000 });
  await expect(diff).toContainText("echo changed");
  await step("version 1 against version 2");

  // A task without its required param: the API's validation error lands on its node.
  await page.goto(`/teams/${team}/workflows/release-flow`);
  await expect(page.getByTestId("task-start")).toBeVisible({ timeout: 30_000 });
  await page.getByRole("button", { name: "Add Execute shell" }).click();
  await expect(page.getByTestId("task-execute-shell-2")).toBeVisible();
  await page.getByRole("button", { name: "Validate" }).click();
  const bad = page.getByTestId("task-execute-shell-2");
  await expect(bad).toHaveAttribute("data-problem", "true");
  await expect(bad).toContainText("script");
  await expect(page.getByTestId("task-execute-shell")).not.toHaveAttribute("data-problem", "true");
  await expect(page.getByRole("alert").filter({ hasText: "WORKFLOW_INVALID" })).toBeVisible();
  await step("a validation error on its node");

  // The list shows it, found by search.
  await page.goto(`/teams/${team}/workflows?q=release`);
  await page.getByRole("button", { name: "Leave" }).click({ timeout: 2000 }).catch(() => undefined);
  await expect(page.getByRole("link", { name: "release-flow" })).toBeVisible();
  await step("the workflow listed");
});
