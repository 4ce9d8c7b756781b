// Signing in with OpenID Connect: the authorization code flow with PKCE through the test
// issuer of gateway/internal/authn/oidctest, which signs the browser in at once. It needs an
// instance configured with that issuer (TestBrowserOIDC starts both and sets
// BATON_OIDC_ISSUER); against any other instance the flow is skipped. The issuer is told
// whom to sign in, or which error to answer, with PUT <issuer>/sign-in.
import type { Page } from "@playwright/test";
import { apiOK, expect, test, unique } from "./fixtures";

const issuer = process.env.BATON_OIDC_ISSUER ?? "";
const issuerHost = issuer === "" ? "" : new URL(issuer).host;

test.skip(issuer === "", "needs an instance configured with the test OpenID Connect issuer (TestBrowserOIDC)");

interface SignIn {
  email?: string;
  name?: string;
  error?: string;
  errorDescription?: string;
  expiresIn?: number;
}

/** nextSignIn tells the test issuer whom to sign in from now on, or which error to answer. */
async function nextSignIn(s: SignIn) {
  const res = await fetch(`${issuer}/sign-in`, { method: "PUT", body: JSON.stringify(s) });
  expect(res.status, "the test issuer took the sign-in").toBe(204);
}

const button = (page: Page) => page.getByRole("button", { name: `Sign in with ${issuerHost}`, exact: true });

/** bearer is the token the page signed in with. */
const bearer = (page: Page) => page.evaluate(() => window.localStorage.getItem("baton.token"));

test("a first-time user signs in with the identity provider, is registered, and signs out through it", async ({
  page,
  admin,
  step,
}) => {
  const email = `${unique("oidc-ada")}@example.com`;
  await nextSignIn({ email, name: "Ada Lovelace" });

  await page.goto("/");
  await expect(page).toHaveURL(/\/signin$/);
  await expect(button(page)).toBeVisible();
  await expect(page.getByLabel("Token")).toBeVisible();
  await step("offered the identity provider beside the token");

  await button(page).click();
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByTestId("identity")).toContainText(email);
  await expect(page.getByTestId("identity")).toContainText("Ada Lovelace");
  await step("signed in, named with the email");

  // The session's bearer is the issuer's ID token, and the user now exists.
  const token = await bearer(page);
  expect(token, "a JWT").toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  const res = await admin.get("/api/v2/profile", { headers: { Authorization: `Bearer ${token}` } });
  const profile = await apiOK<{ email: string; id?: string }>(res, "the signed-in user's profile");
  expect(profile.email).toBe(email);
  const users = await apiOK<{ content: { email: string }[] }>(await admin.get("/api/v2/user/query?limit=1000"), "users");
  expect(users.content.map((u) => u.email)).toContain(email);

  // Signing out ends the issuer's session, which sends the browser back to sign in.
  const endSession = page.waitForRequest((r) => r.url().startsWith(`${issuer}/logout?`));
  await page.getByRole("button", { name: "Sign out" }).click();
  const logout = new URL((await endSession).url());
  expect(logout.searchParams.get("id_token_hint")).toBe(token);
  await expect(page).toHaveURL(/\/signin$/);
  await expect(button(page)).toBeVisible();
  expect(await bearer(page)).toBeNull();
  await step("signed out at the identity provider too");
});

test("the identity provider's refusal is shown in its words", async ({ page, step }) => {
  await nextSignIn({ error: "access_denied", errorDescription: "The user cancelled the sign-in." });
  await page.goto("/signin?next=%2Fadmin%2Fteams");
  await button(page).click();
  await expect(page).toHaveURL(/\/signin\/callback\?/);
  const alert = page.getByRole("alert");
  await expect(alert).toContainText("access_denied");
  await expect(alert).toContainText("The user cancelled the sign-in.");
  expect(await bearer(page)).toBeNull();
  await step("the refusal shown");

  await page.getByRole("link", { name: "Back to sign in" }).click();
  await expect(page).toHaveURL(/\/signin\?next=%2Fadmin%2Fteams$/);
  await expect(button(page)).toBeVisible();
});

test("an expired sign-in goes back to sign in, and then to the page it was on", async ({ page, admin, step }) => {
  const team = unique("e2e-oidc");
  const email = `${team}@example.com`;
  await apiOK(await admin.post("/api/v2/team", { data: { name: team, members: [{ email, role: "editor" }] } }), "create team");

  // Tokens that expire shortly after the sign-in, as a session left open does.
  await nextSignIn({ email, expiresIn: 20 });
  await page.goto(`/teams/${team}/runs`);
  await expect(page).toHaveURL(/\/signin\?next=/);
  await button(page).click();
  await expect(page).toHaveURL(new RegExp(`/teams/${team}/runs$`));
  await expect(page.getByRole("heading", { name: "Runs" })).toBeVisible();
  await step("signed in for a short while");

  // The session ends when the token does: no request needs to fail first.
  await expect(page).toHaveURL(new RegExp(`/signin\\?next=${encodeURIComponent(`/teams/${team}/runs`)}$`), {
    timeout: 90_000,
  });
  await expect(page.getByRole("status").filter({ hasText: "Your sign-in has expired" })).toBeVisible();
  expect(await bearer(page)).toBeNull();
  await step("sent back to sign in, the page kept");

  await nextSignIn({ email });
  await button(page).click();
  await expect(page).toHaveURL(new RegExp(`/teams/${team}/runs$`));
  await expect(page.getByRole("heading", { name: "Runs" })).toBeVisible();
  await step("back where it was");
});
