// How long the runs list takes to show a team of many runs: skipped unless
// BATON_E2E_SCALE_RUNS gives how many runs to make (10000 for the figure in docs/ui.md).
// It makes them through the API, then times, in the browser, from navigation to the first
// page of runs shown with the total, and prints the times. A measurement, not a check of
// speed: it fails only if the list is wrong.
import { apiOK, expect, test, unique } from "./fixtures";

const n = Number.parseInt(process.env.BATON_E2E_SCALE_RUNS ?? "0", 10);

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

  await signIn(page);
  // Where a load's time goes: each request's time from its start to its end.
  const requests: string[] = [];
  page.on("requestfinished", (r) => {
    const t = r.timing();
    requests.push(`${Math.round(t.responseEnd)} ms ${r.method()} ${new URL(r.url()).pathname}${new URL(r.url()).search}`);
  });
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = Date.now();
    await page.goto(`/teams/${team}/runs${i % 2 ? "?statuses=succeeded,notstarted,ready,running" : ""}`);
    await expect(page.getByText(/^[\d,.\s]+ runs$/)).toBeVisible({ timeout: 30_000 });
    await expect(page.getByRole("row")).toHaveCount(26);
    times.push(Date.now() - t0);
    console.log(`load ${i + 1}: ${times[i]} ms\n  ${requests.splice(0).join("\n  ")}`);
  }
  const total = await page.getByText(/^[\d,.\s]+ runs$/).textContent();
  expect(total?.replace(/\D/g, "")).toBe(String(n));
  console.log(`runs list of ${n} runs shown (navigation to first page with total), ms: ${times.join(", ")}`);
  const t0 = Date.now();
  await page.getByRole("button", { name: "Page 2" }).click();
  await expect(page).toHaveURL(/page=2/);
  await expect(page.getByRole("row")).toHaveCount(26);
  console.log(`next page shown in ${Date.now() - t0} ms`);
  await step("many runs");
});
