// What every flow of e2e/ shares: the admin's API client, signing in, a screenshot per step
// and the accessibility check. A flow is one file, e2e/<flow>.spec.ts:
//
//   import { expect, test } from "./fixtures";
//   test("…", async ({ page, admin, signIn, step }) => {
//     await signIn(page);
//     await page.goto("/teams/x/runs");
//     await step("runs listed");   // checks accessibility, then screenshots
//   });
import AxeBuilder from "@axe-core/playwright";
import { test as base, expect, type APIRequestContext, type Page, request as pwRequest } from "@playwright/test";
import path from "node:path";

export { expect };

const url = process.env.BATON_URL ?? "";
const token = process.env.BATON_TOKEN ?? "";
const artifacts = process.env.BATON_E2E_ARTIFACTS ?? path.join(import.meta.dirname, "artifacts");

/** apiOK throws the API's error body when an answer is not 2xx, so a failed setup says why. */
export async function apiOK<T = unknown>(
  res: Awaited<ReturnType<APIRequestContext["get"]>>,
  what: string,
): Promise<T> {
  if (!res.ok()) throw new Error(`${what}: ${res.status()} ${await res.text()}`);
  const text = await res.text();
  return (text === "" ? undefined : JSON.parse(text)) as T;
}

/** unique is a name no other test (or earlier run against the same instance) uses. */
export function unique(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e6).toString(36)}`;
}

/**
 * checkA11y runs axe-core on the page as it is and fails on any serious or critical
 * violation, naming each rule and the elements that break it.
 */
export async function checkA11y(page: Page, what: string) {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  const bad = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  const report = bad
    .map((v) => `${v.impact} ${v.id}: ${v.help}\n${v.nodes.map((n) => `  ${n.target.join(" ")}: ${n.failureSummary ?? ""}`).join("\n")}`)
    .join("\n");
  expect(report, `serious or critical accessibility violations on ${what} (${page.url()})`).toBe("");
}

interface Fixtures {
  /** admin calls the API with the instance's admin token; its paths start with /api/v2. */
  admin: APIRequestContext;
  /** signIn signs page in with the admin token (or the one given) through the sign-in page. */
  signIn: (page: Page, as?: string) => Promise<void>;
  /**
   * step checks the page's accessibility and that nothing failed in it (no uncaught error,
   * nothing the Content-Security-Policy refused), then keeps a screenshot named by flow and
   * step.
   */
  step: (name: string, page?: Page) => Promise<void>;
}

export const test = base.extend<Fixtures>({
  // eslint-disable-next-line no-empty-pattern
  admin: async ({}, use) => {
    const ctx = await pwRequest.newContext({
      baseURL: url,
      extraHTTPHeaders: { Authorization: `Bearer ${token}` },
    });
    await use(ctx);
    await ctx.dispose();
  },
  signIn: async ({}, use) => {
    await use(async (page: Page, as = token) => {
      await page.goto("/signin");
      await page.getByLabel("Token").fill(as);
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect(page).not.toHaveURL(/\/signin/);
    });
  },
  step: async ({ page }, use, testInfo) => {
    const flow = path.basename(testInfo.file, ".spec.ts");
    const title = testInfo.titlePath.slice(1).join(" ").replace(/[^A-Za-z0-9]+/g, "-").toLowerCase();
    // Failed API calls show in the page; the browser's own line about them is not an error.
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(`uncaught: ${e.message}`));
    page.on("console", (m) => {
      if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) problems.push(`console: ${m.text()}`);
    });
    let n = 0;
    await use(async (name: string, p: Page = page) => {
      expect(problems.join("\n"), `errors in the page before ${name}`).toBe("");
      await checkA11y(p, name);
      n += 1;
      const file = `${String(n).padStart(2, "0")}-${name.replace(/[^A-Za-z0-9]+/g, "-").toLowerCase()}.png`;
      await p.screenshot({ path: path.join(artifacts, flow, title, file), fullPage: true });
    });
  },
});
