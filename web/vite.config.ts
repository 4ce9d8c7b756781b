/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The built assets are committed where the gateway embeds them (gateway/internal/webui);
// BATON_WEB_OUT builds elsewhere, for the check that the committed ones are current.
const outDir = process.env.BATON_WEB_OUT ?? "../gateway/internal/webui/dist";

export default defineConfig({
  plugins: [react()],
  build: {
    outDir,
    emptyOutDir: true,
    // No inline script: the gateway's Content-Security-Policy allows scripts from 'self' only.
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 800,
  },
  server: {
    // `npm run dev` talks to a Baton on :8080 (make run) for the API.
    proxy: { "/api": process.env.BATON_URL ?? "http://127.0.0.1:8080" },
  },
  test: {
    environment: "jsdom",
    setupFiles: ["./src/test/setup.ts"],
    include: ["src/**/*.test.{ts,tsx}"],
    css: false,
    // Deadlines, not speed checks: two shared cores can be slow.
    testTimeout: 30_000,
  },
});
