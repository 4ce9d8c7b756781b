// What the designer's flows share about its canvas (React Flow).
import type { Page } from "@playwright/test";
import { expect } from "./fixtures";

/** settled waits until the canvas's viewport stops moving. */
export async function settled(page: Page) {
  const viewport = page.locator(".react-flow__viewport");
  let last = "";
  await expect
    .poll(async () => {
      const now = (await viewport.getAttribute("style")) ?? "";
      const still = now === last;
      last = now;
      return still;
    }, { intervals: [300] })
    .toBe(true);
}
