// Administration: a team made and administered through the UI (members, an approver group,
// a token whose secret is shown once and works, parameters with a secret masked), then the
// instance's pages and the team deleted.
import { apiOK, expect, test, unique } from "./fixtures";

test("administer a team and the instance", async ({ page, admin, signIn, step, playwright }) => {
  test.setTimeout(120_000);
  const taken = unique("e2e-taken");
  await apiOK(await admin.post("/api/v2/team", { data: { name: taken } }), "create a team whose name is taken");
  const team = unique("e2e-adm");
  const email = `${unique("ann")}@example.com`;

  await signIn(page);
  await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Administration" }).click();
  await expect(page).toHaveURL(/\/admin\/teams$/);
  await page.mouse.move(600, 10); // off the navigation link, whose hover colours are the shell's
  await expect(page.getByRole("heading", { name: "Teams" })).toBeVisible();
  await step("the instance's teams");

  // A team's name is checked as it is typed.
  await page.getByRole("button", { name: "Create team" }).click();
  const dialog = page.getByRole("dialog", { name: "Create a team" });
  await dialog.getByLabel(/^Name/).fill(taken);
  await expect(dialog.getByText("TEAM_NON_UNIQUE_NAME")).toBeVisible();
  await expect(dialog.getByRole("button", { name: "Create" })).toBeDisabled();
  await step("a taken name refused as typed");
  await dialog.getByLabel(/^Name/).fill(team);
  await expect(dialog.getByText(`the team will be ${team}`)).toBeVisible();
  await dialog.getByLabel("Display name").fill("Admin flow");
  await step("a free name");
  await dialog.getByRole("button", { name: "Create" }).click();
  await expect(page).toHaveURL(new RegExp(`/teams/${team}/settings/members$`));
  await expect(page.getByRole("heading", { name: "Team settings: Admin flow" })).toBeVisible();

  // Members.
  await page.getByLabel("Email").fill(email);
  await page.getByRole("combobox", { name: "Role" }).click();
  await page.getByRole("option", { name: "Editor" }).click();
  await page.getByRole("button", { name: "Add member" }).click();
  const members = page.getByRole("table", { name: "Members" });
  await expect(members.getByRole("row", { name: new RegExp(email) })).toBeVisible();
  await expect(members.getByRole("combobox", { name: `Role of ${email}` })).toHaveValue("Editor");
  await step("a member added");

  // An approver group of that member.
  await page.getByRole("tab", { name: "Approver groups" }).click();
  await expect(page).toHaveURL(new RegExp(`/teams/${team}/settings/approvers$`));
  await page.getByRole("button", { name: "Create approver group" }).click();
  const group = page.getByRole("dialog", { name: "Create an approver group" });
  await group.getByLabel(/^Name/).fill("leads");
  await group.getByLabel("Approvers").click();
  await page.getByRole("option", { name: email }).click();
  await page.keyboard.press("Escape"); // the multi-select stays open for more choices
  await group.getByRole("button", { name: "Save" }).click();
  await expect(group).toBeHidden();
  await expect(page.getByRole("table", { name: "Approver groups" }).getByRole("row", { name: /leads/ })).toContainText(email);
  await step("an approver group");
  const read = await apiOK<{ approverGroups: { name: string; approvers: { email: string }[] }[] }>(
    await admin.get(`/api/v2/team/${team}`),
    "read the team",
  );
  expect(read.approverGroups.map((g) => [g.name, g.approvers.map((a) => a.email)])).toEqual([["leads", [email]]]);

  // A token: its secret is shown once, and works.
  await page.getByRole("tab", { name: "Tokens" }).click();
  await page.getByRole("button", { name: "Create token" }).click();
  const create = page.getByRole("dialog", { name: `Create a token of ${team}` });
  await create.getByLabel(/^Name/).fill("ci");
  await create.getByRole("button", { name: "Create" }).click();
  const shown = page.getByRole("dialog", { name: "Token ci created" });
  await expect(shown.getByText("You will not see it again")).toBeVisible();
  const secret = await shown.getByRole("textbox", { name: "Secret" }).inputValue();
  expect(secret).toMatch(/^btt_/);
  await step("the secret shown once");
  const asToken = await playwright.request.newContext({
    baseURL: process.env.BATON_URL,
    extraHTTPHeaders: { Authorization: `Bearer ${secret}` },
  });
  const viaToken = await apiOK<{ name: string }>(await asToken.get(`/api/v2/team/${team}`), "read the team with the new token");
  expect(viaToken.name).toBe(team);
  await shown.getByRole("button", { name: "I have copied it" }).click();
  const tokens = page.getByRole("table", { name: "Tokens" });
  await expect(tokens.getByRole("row", { name: /ci/ })).toContainText("valid");
  expect(await page.content()).not.toContain(secret);
  await step("the token listed, its secret gone");

  // Revoked, it stops working (the gateway may trust it for its cache's few seconds).
  await tokens.getByRole("button", { name: "Revoke ci" }).click();
  await page.getByRole("dialog", { name: "Revoke the token ci?" }).getByRole("button", { name: "Revoke token" }).click();
  await expect(tokens.getByRole("row", { name: /ci/ })).toContainText("revoked or expired");
  await expect.poll(async () => (await asToken.get(`/api/v2/team/${team}`)).status(), { timeout: 15_000 }).toBe(401);
  await asToken.dispose();
  await step("the token revoked");

  // Parameters, a secret one masked.
  await page.getByRole("tab", { name: "Parameters" }).click();
  for (const p of [
    { name: "region", type: null, value: "eu-west-1" },
    { name: "db-password", type: "password (secret)", value: "s3cr3t-pa55" },
  ]) {
    await page.getByRole("button", { name: "Add parameter" }).click();
    const form = page.getByRole("dialog", { name: "Add a parameter" });
    await form.getByLabel(/^Name/).fill(p.name);
    if (p.type) {
      await form.getByRole("combobox", { name: "Type" }).click();
      await page.getByRole("option", { name: p.type }).click();
      await form.getByLabel("Secret value").fill(p.value);
    } else {
      await form.getByLabel("Value", { exact: true }).fill(p.value);
    }
    await form.getByRole("button", { name: "Save" }).click();
    await expect(form).toBeHidden();
  }
  const params = page.getByRole("table", { name: "Parameters" });
  await expect(params.getByTestId("param-value-region")).toHaveText("eu-west-1");
  await expect(params.getByTestId("param-value-db-password")).toHaveText("********");
  expect(await page.content()).not.toContain("s3cr3t-pa55");
  await step("parameters, the secret masked");
  // Edited without revealing it: the description changes, the secret stays.
  await params.getByRole("button", { name: "Edit db-password" }).click();
  const edit = page.getByRole("dialog", { name: "Edit db-password" });
  await expect(edit.getByLabel("Secret value")).toHaveValue("");
  await edit.getByLabel("Description").fill("the database's");
  await edit.getByRole("button", { name: "Save" }).click();
  await expect(edit).toBeHidden();
  await expect(params.getByRole("row", { name: /db-password/ })).toContainText("the database's");
  const after = await apiOK<{ parameters: { name: string; type: string; value: unknown }[] }>(
    await admin.get(`/api/v2/team/${team}`),
    "read the team's parameters",
  );
  expect(after.parameters.find((p) => p.name === "db-password")).toMatchObject({ type: "password", value: "********" });

  await page.getByRole("tab", { name: "Quotas" }).click();
  await expect(page.getByRole("table", { name: "Quotas" })).toBeVisible();
  await step("quotas");
  await page.getByRole("tab", { name: "Integrations" }).click();
  await expect(page.getByRole("heading", { name: "Code host" })).toBeVisible();
  await step("integrations");

  // The instance's pages.
  await page.goto("/admin/settings");
  await expect(page.getByRole("heading", { name: "Settings", level: 1 })).toBeVisible();
  await expect(page.locator("section").first()).toBeVisible();
  await step("settings");
  await page.getByRole("tab", { name: "Global parameters" }).click();
  await expect(page).toHaveURL(/\/admin\/parameters$/);
  await step("global parameters");
  await page.getByRole("tab", { name: "Global tokens" }).click();
  await expect(page.getByRole("button", { name: "Create token" })).toBeVisible();
  await step("global tokens");

  // The team deleted, after confirming.
  await page.goto(`/admin/teams?team=${team}`);
  await page.getByRole("button", { name: `Delete team ${team}` }).click();
  const confirm = page.getByRole("dialog", { name: `Delete the team ${team}?` });
  await step("deleting asks first");
  await confirm.getByRole("button", { name: "Delete team" }).click();
  await expect(page.getByText(`No team is named ${team}.`)).toBeVisible();
  expect((await admin.get(`/api/v2/team/${team}`)).status()).toBe(404);
  await step("the team deleted");
});

test("a principal without a global grant is not shown the administration", async ({ page, admin, signIn, step }) => {
  const team = unique("e2e-own");
  await apiOK(await admin.post("/api/v2/team", { data: { name: team } }), "create team");
  const token = await apiOK<{ token: string }>(
    await admin.post("/api/v2/token", { data: { type: "team", name: "reader", principal: team, permissions: ["**/read"] } }),
    "create a team token",
  );
  await signIn(page, token.token);
  await page.goto(`/teams/${team}/settings`);
  await expect(page.getByText("Only the team's owners and administrators change its settings")).toBeVisible();
  await expect(page.getByRole("button", { name: "Add member" })).toHaveCount(0);
  await expect(page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Administration" })).toHaveCount(0);
  await step("a team token reads its settings");
  await page.goto("/admin/teams");
  await expect(page.getByText("Administrators only")).toBeVisible();
  await step("the administration refused");
});
