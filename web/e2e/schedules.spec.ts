// Schedules: one made with the cron builder, its next fires changing as the expression and
// the zone are typed, saved and read back through the API, its month of fires, and a
// backfilled window whose runs are listed.
import type { APIRequestContext } from "@playwright/test";
import { apiOK, expect, test, unique } from "./fixtures";

interface Schedule {
  id: string;
  name?: string;
  cronSchedule?: string;
  timezone: string;
  status: string;
  params?: { name: string; value: unknown }[];
}

/** nightly makes a team with a workflow whose schedule trigger is on, and answers the team. */
async function nightly(admin: APIRequestContext): Promise<string> {
  const team = unique("e2e-sched");
  await apiOK(await admin.post("/api/v2/team", { data: { name: team } }), "create team");
  await apiOK(
    await admin.post(`/api/v2/team/${team}/workflow`, {
      data: {
        name: "nightly",
        triggers: { schedule: { enabled: true } },
        params: [{ name: "who", label: "Who", type: "text", default: "world" }],
        tasks: [
          { name: "start", type: "start" },
          { name: "end", type: "end", dependencies: [{ taskRef: "start" }] },
        ],
      },
    }),
    "create workflow",
  );
  return team;
}

test("create a schedule with the builder, its next fires following the expression and the zone", async ({ page, admin, signIn, step }) => {
  test.setTimeout(240_000); // a dozen steps, each checked by axe: minutes on a busy machine
  const team = await nightly(admin);

  await signIn(page);
  await page.goto(`/teams/${team}/schedules`);
  await expect(page.getByRole("heading", { name: "Schedules" })).toBeVisible();
  await expect(page.getByText("No schedules yet")).toBeVisible();
  await step("no schedules yet");

  await page.getByRole("link", { name: "New schedule" }).click();
  await expect(page).toHaveURL(new RegExp(`/teams/${team}/schedules/new$`));
  await page.getByRole("combobox", { name: "Workflow" }).click();
  await page.getByRole("option", { name: "nightly" }).click();
  await expect(page.getByRole("textbox", { name: "Who" })).toHaveValue("world");
  await page.getByRole("textbox", { name: "Name" }).fill("nightly report");

  // The zone first: UTC, so the fire times read plainly.
  const zone = page.getByRole("combobox", { name: "Time zone" });
  await zone.click();
  await zone.fill("UTC");
  await page.getByRole("option", { name: "UTC", exact: true }).click();

  const fires = page.getByTestId("next-fires");
  await page.getByRole("combobox", { name: "Preset" }).click();
  await page.getByRole("option", { name: "Every day at 09:00" }).click();
  await expect(page.getByRole("textbox", { name: "Cron expression" })).toHaveValue("0 9 * * *");
  await expect(page.getByRole("textbox", { name: "Hour" })).toHaveValue("9");
  await expect(fires.getByRole("listitem")).toHaveCount(5);
  await expect(fires.getByRole("listitem").first()).toContainText("09:00");
  await step("a preset and its next fires");

  // A field of the builder rewrites the expression; the fires follow.
  await page.getByRole("textbox", { name: "Hour" }).fill("14");
  await page.getByRole("textbox", { name: "Minute" }).fill("30");
  await expect(page.getByRole("textbox", { name: "Cron expression" })).toHaveValue("30 14 * * *");
  await expect(fires.getByRole("listitem").first()).toContainText("14:30");

  // The raw expression, typed: an invalid one says why, then a valid one fires again.
  const expr = page.getByRole("textbox", { name: "Cron expression" });
  await expr.fill("30 14 * * FUNDAY");
  await expect(page.getByTestId("cron-invalid")).toBeVisible();
  await step("an invalid expression");
  await expr.fill("30 14 * * MON-FRI");
  await expect(fires.getByRole("listitem")).toHaveCount(5);
  const before = await fires.innerText();
  expect(before).toContain("14:30");
  expect(before).not.toMatch(/Sat|Sun/);

  // Another zone: the same wall time, other instants, written in that zone.
  await zone.click();
  await zone.fill("Asia/Tokyo");
  await page.getByRole("option", { name: "Asia/Tokyo" }).click();
  await expect(page.getByText("Next fire times in Asia/Tokyo")).toBeVisible();
  await expect.poll(() => fires.innerText()).not.toBe(before);
  await expect(fires.getByRole("listitem").first()).toContainText("14:30");
  await expect(fires.getByRole("listitem").first()).toContainText("GMT+9");
  await step("the next fires in another zone");

  await page.getByRole("button", { name: "Create schedule" }).click();
  await expect(page).toHaveURL(new RegExp(`/teams/${team}/schedules/[0-9a-f]+$`));
  const id = page.url().split("/").pop()!;
  const saved = await apiOK<Schedule>(await admin.get(`/api/v2/team/${team}/schedule/${id}`), "read schedule");
  expect(saved).toMatchObject({ name: "nightly report", cronSchedule: "30 14 * * MON-FRI", timezone: "Asia/Tokyo", status: "active" });
  await expect(page.getByRole("heading", { name: "nightly report" })).toBeVisible();
  await step("saved");

  // Listed, with its next fires in its zone.
  await page.getByRole("link", { name: "All schedules" }).click();
  const row = page.getByRole("table", { name: "Schedules" }).getByRole("row", { name: /nightly report/ });
  await expect(row).toContainText("30 14 * * MON-FRI");
  await expect(row).toContainText("Asia/Tokyo");
  await expect(row).toContainText("GMT+9");
  await step("listed");
});

test("a schedule's month of fires, enabled and disabled, a backfilled window and its runs, deleted", async ({ page, admin, signIn, step }) => {
  test.setTimeout(240_000); // a dozen steps, each checked by axe: minutes on a busy machine
  const team = await nightly(admin);
  const { id } = await apiOK<Schedule>(
    await admin.post(`/api/v2/team/${team}/schedule`, {
      data: { name: "nightly report", workflowRef: "nightly", type: "cron", cronSchedule: "30 14 * * MON-FRI", timezone: "Asia/Tokyo" },
    }),
    "create schedule",
  );
  await signIn(page);

  // A month of fires: this month, then the next, deep-linked.
  await page.goto(`/teams/${team}/schedules/${id}`);
  await expect(page.getByRole("heading", { name: "nightly report" })).toBeVisible();
  await page.getByRole("tab", { name: "Calendar" }).click();
  await expect(page).toHaveURL(/tab=calendar/);
  const cal = page.getByRole("table", { name: /^Fires in / });
  await expect(cal.getByText("14:30").first()).toBeVisible();
  await page.getByRole("button", { name: "Next month" }).click();
  await expect(page).toHaveURL(/month=\d{4}-\d{2}/);
  // Every weekday of a month fires once: 20 to 23 of them.
  await expect.poll(() => cal.getByText("14:30").count()).toBeGreaterThanOrEqual(20);
  expect(await cal.getByText("14:30").count()).toBeLessThanOrEqual(23);
  await step("a month of fires");

  // Disable, then enable again: the API says so each time.
  const enabled = page.getByRole("switch", { name: "Enabled" });
  await enabled.click({ force: true });
  await expect.poll(async () => (await apiOK<Schedule>(await admin.get(`/api/v2/team/${team}/schedule/${id}`), "read")).status).toBe("inactive");
  await enabled.click({ force: true });
  await expect.poll(async () => (await apiOK<Schedule>(await admin.get(`/api/v2/team/${team}/schedule/${id}`), "read")).status).toBe("active");

  // Backfill the last week (in the schedule's zone): five weekdays, five runs.
  await page.getByRole("tab", { name: "Backfill" }).click();
  const now = Date.now();
  const tokyo = (ms: number) => new Date(ms + 9 * 3_600_000).toISOString().slice(0, 16);
  await page.getByLabel("From (Asia/Tokyo)").fill(tokyo(now - 7 * 86_400_000));
  await page.getByLabel("To (Asia/Tokyo)").fill(tokyo(now - 60_000));
  await page.getByRole("button", { name: "Backfill", exact: true }).click();
  const result = page.getByTestId("backfill-result");
  await expect(result).toContainText("The window held 5 fires; 5 runs were created now");
  const runs = page.getByRole("table", { name: "Scheduled runs" });
  await expect(runs.getByRole("row")).toHaveCount(6);
  await step("a backfilled window and its runs");
  const listed = await apiOK<{ content: { id: string; trigger?: string }[] }>(
    await admin.get(`/api/v2/team/${team}/workflowrun/query?workflows=nightly&triggers=schedule&limit=100`),
    "query runs",
  );
  expect(listed.content).toHaveLength(5);

  // Again: the fires made their runs already.
  await page.getByRole("button", { name: "Backfill", exact: true }).click();
  await expect(result).toContainText("0 runs were created now (5 had their run already)");

  // Delete, once confirmed.
  await page.getByRole("button", { name: "Delete" }).click();
  await step("asked to confirm the delete", page);
  await page.getByRole("button", { name: "Delete schedule" }).click();
  await expect(page).toHaveURL(new RegExp(`/teams/${team}/schedules$`));
  const gone = await admin.get(`/api/v2/team/${team}/schedule/${id}`);
  if (gone.ok()) expect((await gone.json()).status).toBe("archived");
  else expect(gone.status()).toBe(404);
});
