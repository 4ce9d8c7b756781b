// End-to-end tests of the UI in Debian's Chromium, against a running Baton: BATON_URL (the
// gateway, without /api/v2) and BATON_TOKEN (its admin token). gateway/internal/webtest
// starts a fresh standalone instance and runs them (make test); by hand:
//   BATON_URL=http://127.0.0.1:8080 BATON_TOKEN=... npx playwright test
// No browser is ever downloaded: CHROMIUM (default /usr/bin/chromium) is launched.
import { defineConfig } from "@playwright/test";

const artifacts = process.env.BATON_E2E_ARTIFACTS ?? "e2e/artifacts";

export default defineConfig({
  testDir: "e2e",
  testMatch: "*.spec.ts",
  outputDir: `${artifacts}/results`,
  // Deadlines, not speed checks: the tests share two cores with the server and more.
  timeout: 180_000,
  expect: { timeout: 30_000 },
  fullyParallel: false,
  workers: 1,
  forbidOnly: true,
  reporter: [["list"]],
  use: {
    baseURL: process.env.BATON_URL,
    browserName: "chromium",
    viewport: { width: 1366, height: 768 },
    actionTimeout: 30_000,
    navigationTimeout: 60_000,
    screenshot: "only-on-failure",
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
});
