// The runs list: a run made through the API is listed with its status, filters are deep
// links, and a click opens the run's page.
import { apiOK, expect, test, unique } from "./fixtures";

interface Run {
  id: string;
  status: string;
  phase: string;
}

test("a run made through the API is listed with its status", async ({ page, admin, signIn, step }) => {
  const team = unique("e2e-runs");
  await apiOK(await admin.post("/api/v2/team", { data: { name: team } }), "create the team");
  await apiOK(
    await admin.put(`/api/v2/team/${team}/workflow`, {
      data: {
        name: "hello",
        displayName: "Hello",
        params: [{ name: "who", type: "text", default: "world" }],
        tasks: [
          { name: "start", type: "start" },
          {
            name: "greet",
            type: "script",
            dependencies: [{ taskRef: "start" }],
            params: [{ name: "script", value: "echo hello $(params.who)" }],
          },
          { name: "end", type: "end", dependencies: [{ taskRef: "greet" }] },
        ],
      },
    }),
    "save the workflow",
  );

  await signIn(page);
  await page.goto(`/teams/${team}/runs`);
  await expect(page.getByText("No runs yet.")).toBeVisible();
  await step("no runs yet");

  const submitted = await apiOK<Run>(
    await admin.post(`/api/v2/team/${team}/workflow/hello/submit?start=true`, {
      data: { params: { who: "browser" }, labels: { source: "e2e" } },
    }),
    "submit a run",
  );
  // The run ends on its own; its status as the API says it is what the list must show.
  await expect
    .poll(async () => (await apiOK<Run>(await admin.get(`/api/v2/team/${team}/workflowrun/${submitted.id}`), "read the run")).phase, {
      timeout: 30_000,
    })
    .toBe("completed");
  const run = await apiOK<Run>(await admin.get(`/api/v2/team/${team}/workflowrun/${submitted.id}`), "read the run");
  expect(run.status).toBe("succeeded");

  await page.reload();
  const row = page.getByRole("row").filter({ hasText: run.id });
  await expect(row).toBeVisible();
  await expect(row).toContainText("Hello");
  await expect(row).toContainText(run.status);
  await expect(row).toContainText("manual");
  await expect(page.getByText("1 run", { exact: true })).toBeVisible();
  await step("the run listed with its status");

  // A small laptop screen: the filters wrap, the table keeps its columns.
  await page.setViewportSize({ width: 1024, height: 640 });
  await expect(row).toBeVisible();
  await expect(page.getByRole("columnheader", { name: "Duration" })).toBeVisible();
  await step("on a small laptop screen");
  await page.setViewportSize({ width: 1366, height: 768 });

  // A filter is in the URL: the link shows the same list.
  await page.getByRole("combobox", { name: "Status" }).click();
  await page.getByRole("option", { name: "failed" }).click();
  await page.keyboard.press("Escape");
  await expect(page).toHaveURL(/statuses=failed/);
  await expect(page.getByText("No run matches these filters.")).toBeVisible();
  await step("filtered to failed runs");

  await page.goto(`/teams/${team}/runs?statuses=succeeded&labels=source%3De2e`);
  await expect(page.getByRole("row").filter({ hasText: run.id })).toBeVisible();
  await step("a filtered deep link");

  await page.getByRole("link", { name: run.id }).click();
  await expect(page).toHaveURL(new RegExp(`/teams/${team}/runs/${run.id}$`));
  const main = page.getByRole("main");
  await expect(main.getByRole("heading", { level: 1, name: "Hello" })).toBeVisible();
  await expect(main.getByText(run.id, { exact: true })).toBeVisible();
  await expect(main.getByText(run.status, { exact: true }).first()).toBeVisible();
  await step("the run's page");
});
