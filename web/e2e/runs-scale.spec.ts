// How long the runs list takes to show a team of many runs: skipped unless
// BATON_E2E_SCALE_RUNS gives how many runs to make (10000 for the figure in docs/ui.md).
// It makes them through the API, then loads the list five times and prints, for each load,
// by the page's own clock (milliseconds since the navigation started): when the first page
// of rows and the total were on screen, and when each request started and ended. A
// measurement, not a check of speed: it fails only if the list is wrong.
import type { Page } from "@playwright/test";
import { apiOK, expect, test, unique } from "./fixtures";

const n = Number.parseInt(process.env.BATON_E2E_SCALE_RUNS ?? "0", 10);

// Playwright's trace (kept when a flow fails) snapshots the page's DOM after each action, on
// the page's main thread, in the middle of the load it would time: measured without it.
test.use({ trace: "off" });

/**
 * watchShown records in the page, by its clock, the first frame in which the runs table has
 * a page of rows (rows, the header row aside) and the total is written: "usable".
 */
async function watchShown(page: Page, rows: number) {
  await page.addInitScript((rows) => {
    const w = window as unknown as { __shown?: number };
    const done = () =>
      document.querySelectorAll('table[aria-label="Runs"] tbody tr').length >= rows &&
      [...document.querySelectorAll("p")].some((p) => /^[\d,.\s]+ runs$/.test(p.textContent ?? ""));
    const check = () => {
      if (w.__shown !== undefined || !done()) return;
      observer.disconnect();
      // On screen: the frame that paints it.
      requestAnimationFrame(() => (w.__shown = performance.now()));
    };
    const observer = new MutationObserver(check);
    observer.observe(document, { childList: true, subtree: true, characterData: true });
  }, rows);
}

/** waterfall is each resource of the page's load: when it started and ended, by the page's clock. */
async function waterfall(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming | undefined;
    const lines = nav ? [`${Math.round(nav.domContentLoadedEventEnd)} ms DOMContentLoaded`] : [];
    for (const e of performance.getEntriesByType("resource") as PerformanceResourceTiming[]) {
      const u = new URL(e.name);
      lines.push(`${Math.round(e.startTime)}–${Math.round(e.responseEnd)} ms ${u.pathname}${u.search}`);
    }
    return lines;
  });
}

test("the runs list of a team with many runs", async ({ page, admin, signIn, step }) => {
  test.skip(!(n > 0), "set BATON_E2E_SCALE_RUNS to measure");
  test.setTimeout(30 * 60_000);
  const team = unique("e2e-scale");
  await apiOK(
    await admin.post("/api/v2/team", { data: { name: team, quotas: { maxConcurrentRuns: 1000, maxWorkflowRunMonthly: 1_000_000 } } }),
    "create the team",
  );
  await apiOK(
    await admin.put(`/api/v2/team/${team}/workflow`, {
      data: {
        name: "tick",
        tasks: [
          { name: "start", type: "start" },
          { name: "end", type: "end", dependencies: [{ taskRef: "start" }] },
        ],
      },
    }),
    "save the workflow",
  );

  const began = Date.now();
  let next = 0;
  let throttled = 0;
  const progress = setInterval(
    () => console.log(`submitted ${next} of ${n} runs in ${((Date.now() - began) / 1000).toFixed(0)} s, ${throttled} refused for a quota`),
    10_000,
  );
  const worker = async () => {
    while (next < n) {
      next += 1;
      for (;;) {
        const res = await admin.post(`/api/v2/team/${team}/workflow/tick/submit`, { data: {} });
        if (res.status() === 429) {
          throttled += 1;
          await new Promise((r) => setTimeout(r, 200));
          continue;
        }
        await apiOK(res, "submit a run");
        break;
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker)).finally(() => clearInterval(progress));
  console.log(`made ${n} runs in ${((Date.now() - began) / 1000).toFixed(1)} s`);

  // The engine runs them in the background: the loads are measured once it is done, so that
  // they time the UI and the list's reads, not a server busy with thousands of runs.
  const active = async () =>
    (
      await apiOK<{ totalElements: number }>(
        await admin.get(`/api/v2/team/${team}/workflowrun/query?statuses=notstarted,ready,running,waiting&limit=1`),
        "count the active runs",
      )
    ).totalElements;
  const drained = Date.now();
  await expect
    .poll(
      async () => {
        const left = await active();
        if (left > 0) console.log(`${left} runs still to finish`);
        return left;
      },
      { timeout: 20 * 60_000, intervals: [10_000] },
    )
    .toBe(0);
  console.log(`every run finished ${((Date.now() - drained) / 1000).toFixed(0)} s after the last submission`);

  await signIn(page);
  await watchShown(page, 25);
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    await page.goto(`/teams/${team}/runs${i % 2 ? "?statuses=succeeded,notstarted,ready,running" : ""}`);
    await expect(page.getByText(/^[\d,.\s]+ runs$/)).toBeVisible({ timeout: 30_000 });
    await expect(page.getByRole("row")).toHaveCount(26);
    const shown = await page.waitForFunction(() => (window as unknown as { __shown?: number }).__shown);
    times.push(Math.round((await shown.jsonValue()) ?? 0));
    console.log(`load ${i + 1}: shown at ${times[i]} ms\n  ${(await waterfall(page)).join("\n  ")}`);
  }
  const total = await page.getByText(/^[\d,.\s]+ runs$/).textContent();
  expect(total?.replace(/\D/g, "")).toBe(String(n));
  console.log(`runs list of ${n} runs shown (navigation's start to first page of rows with the total on screen), ms: ${times.join(", ")}`);
  const t0 = Date.now();
  await page.getByRole("button", { name: "Page 2" }).click();
  await expect(page).toHaveURL(/page=2/);
  await expect(page.getByRole("row")).toHaveCount(26);
  console.log(`next page shown in ${Date.now() - t0} ms`);
  await step("many runs");
});
