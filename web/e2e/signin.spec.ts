// Sign in, the shell, the team switcher, themes, not found and sign out.
import { apiOK, expect, test, unique } from "./fixtures";

test("sign in, switch team and theme, sign out", async ({ page, admin, step }) => {
  const teams = [unique("e2e-a"), unique("e2e-b")] as const;
  for (const name of teams) {
    await apiOK(await admin.post("/api/v2/team", { data: { name, displayName: name } }), `create team ${name}`);
  }

  await page.goto(`/teams/${teams[0]}/runs`);
  await expect(page).toHaveURL(/\/signin\?next=/);
  await expect(page.getByRole("heading", { name: "Sign in to Baton" })).toBeVisible();
  await step("asked to sign in");

  await page.getByLabel("Token").fill("not-a-token");
  await page.getByRole("button", { name: "Sign in" }).click();
  const alert = page.getByRole("alert");
  await expect(alert).toContainText("UNAUTHENTICATED");
  await step("a wrong token refused in the contract's words");

  await page.getByLabel("Token").fill(process.env.BATON_TOKEN ?? "");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(new RegExp(`/teams/${teams[0]}/runs$`));
  await expect(page.getByRole("heading", { name: "Runs" })).toBeVisible();
  await expect(page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Runs" })).toBeVisible();
  await step("signed in, back where asked");

  await page.getByRole("combobox", { name: "Team" }).click();
  await page.getByRole("option", { name: teams[1] }).click();
  await expect(page).toHaveURL(new RegExp(`/teams/${teams[1]}/runs$`));
  await step("switched team");

  const scheme = () => page.locator("html").getAttribute("data-mantine-color-scheme");
  const before = await scheme();
  const next = before === "dark" ? "light" : "dark";
  await page.getByRole("button", { name: `Switch to the ${next} theme` }).click();
  await expect.poll(scheme).toBe(next);
  await step(`${next} theme`);

  await page.reload();
  await expect.poll(scheme).toBe(next);
  await expect(page.getByRole("heading", { name: "Runs" })).toBeVisible();

  await page.getByRole("button", { name: "Go to… (Ctrl+K)" }).click();
  await page.getByRole("textbox", { name: "Go to" }).fill(teams[0]);
  await step("the command palette");
  await page.getByRole("button", { name: `Switch to ${teams[0]}` }).click();
  await expect(page).toHaveURL(new RegExp(`/teams/${teams[0]}/runs$`));

  await page.goto(`/teams/${teams[1]}/nothing-here`);
  await expect(page.getByRole("heading", { name: "Page not found" })).toBeVisible();
  await step("not found");

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/signin$/);
  expect(await page.evaluate(() => window.localStorage.getItem("baton.token"))).toBeNull();
  await step("signed out");
});

test("a deep link to what does not exist says so in the contract's words", async ({ page, admin, signIn, step }) => {
  const team = unique("e2e-c");
  await apiOK(await admin.post("/api/v2/team", { data: { name: team } }), `create team ${team}`);
  await signIn(page);
  await page.goto(`/teams/${team}/runs/0193f0e0-0000-7000-8000-000000000000`);
  await expect(page.getByRole("alert")).toContainText("WORKFLOWRUN_NOT_FOUND");
  await step("an unknown run");
});
