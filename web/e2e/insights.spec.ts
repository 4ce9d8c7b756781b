// Insights: a team's runs by status over time, duration percentiles and per workflow, after
// a few runs made through the API.
import { apiOK, expect, test, unique } from "./fixtures";

test("insights of a team's runs", async ({ page, admin, signIn, step }) => {
  const team = unique("e2e-ins");
  await apiOK(await admin.post("/api/v2/team", { data: { name: team } }), "create team");
  const workflows = ["build", "deploy"];
  for (const name of workflows) {
    await apiOK(
      await admin.post(`/api/v2/team/${team}/workflow`, {
        data: {
          name,
          tasks: [
            { name: "start", type: "start" },
            { name: "end", type: "end", dependencies: [{ taskRef: "start" }] },
          ],
        },
      }),
      `create workflow ${name}`,
    );
  }
  const runs: string[] = [];
  for (const name of ["build", "build", "deploy"]) {
    const run = await apiOK<{ id: string }>(
      await admin.post(`/api/v2/team/${team}/workflow/${name}/submit?start=true`, { data: {} }),
      `submit ${name}`,
    );
    runs.push(run.id);
  }
  for (const id of runs) {
    await expect
      .poll(async () => (await apiOK<{ phase: string }>(await admin.get(`/api/v2/team/${team}/workflowrun/${id}`), "read run")).phase, {
        timeout: 30_000,
      })
      .toBe("completed");
  }

  await signIn(page);
  await page.goto(`/teams/${team}/runs`);
  await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Insights" }).click();
  await expect(page).toHaveURL(new RegExp(`/teams/${team}/insights$`));
  await page.mouse.move(600, 10); // off the navigation link, whose hover colours are the shell's
  await expect(page.getByRole("heading", { name: "Insights" })).toBeVisible();
  await expect(page.getByLabel("Runs: 3")).toBeVisible();
  const perWorkflow = page.getByRole("table", { name: "Runs per workflow" });
  await expect(perWorkflow.getByRole("row", { name: /^build 2 2 0 100%/ })).toBeVisible();
  await expect(perWorkflow.getByRole("row", { name: /^deploy 1 1 0 100%/ })).toBeVisible();
  await expect(page.getByRole("figure", { name: /Runs by day and status: 3 runs/ })).toBeVisible();
  await step("insights of the last 30 days");

  // The chart's data as a table, sorting and the range are all in the URL.
  await page.getByText("Table", { exact: true }).click();
  await expect(page.getByRole("table", { name: "Runs by day and status" })).toBeVisible();
  await perWorkflow.getByRole("button", { name: "Workflow" }).click();
  await expect(page).toHaveURL(/sort=workflow/);
  await expect(perWorkflow.getByRole("row").nth(1)).toContainText("build");
  await page.getByText("7 days", { exact: true }).click();
  await expect(page).toHaveURL(/range=7d/);
  await page.reload();
  await expect(page.getByRole("table", { name: "Runs by day and status" })).toBeVisible();
  await expect(perWorkflow.getByRole("columnheader", { name: "Workflow" })).toHaveAttribute("aria-sort", "ascending");
  await expect(page.getByLabel("Runs: 3")).toBeVisible();
  await step("as a table, sorted, the last 7 days");

  // A workflow filter narrows every figure.
  await page.goto(`/teams/${team}/insights?workflows=deploy`);
  await expect(page.getByLabel("Runs: 1")).toBeVisible();
  await expect(perWorkflow.getByRole("row")).toHaveCount(2);
  await step("one workflow");

  // A window without runs says so.
  await page.goto(`/teams/${team}/insights?range=custom&from=2020-01-01&to=2020-01-31`);
  await expect(page.getByText("No runs in this window.")).toBeVisible();
  await step("an empty window");
});
