import { MantineProvider } from "@mantine/core";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { RouterProvider, createMemoryRouter } from "react-router";
import { afterEach, describe, expect, it, vi } from "vitest";
import { clearToken, setToken } from "../session/session";
import { CommandPalette } from "./CommandPalette";

// jsdom does not scroll; the palette scrolls its selected action into view.
Element.prototype.scrollIntoView ??= () => {};

function renderPalette() {
  vi.stubGlobal(
    "fetch",
    vi.fn(async () => new Response(JSON.stringify({ name: "ada", teams: [{ name: "infra" }], permissions: [] }), { status: 200 })),
  );
  setToken("secret");
  const router = createMemoryRouter(
    [
      { path: "/teams/:team/runs", element: <CommandPalette /> },
      { path: "/teams/:team/schedules", element: <p>the schedules</p> },
    ],
    { initialEntries: ["/teams/infra/runs"] },
  );
  render(
    <MantineProvider>
      <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </MantineProvider>,
  );
  return router;
}

afterEach(() => {
  vi.unstubAllGlobals();
  clearToken();
});

describe("CommandPalette", () => {
  it("is not rendered until used; its button opens it and it goes to a page", async () => {
    const router = renderPalette();
    expect(screen.queryByRole("textbox", { name: "Go to" })).not.toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Go to… (Ctrl+K)" }));
    const search = await screen.findByRole("textbox", { name: "Go to" });
    await userEvent.type(search, "Schedules");
    await userEvent.click(await screen.findByRole("button", { name: /Schedules of infra/ }));
    expect(await screen.findByText("the schedules")).toBeInTheDocument();
    expect(router.state.location.pathname).toBe("/teams/infra/schedules");
  });

  it("opens with Ctrl+K before it was ever loaded", async () => {
    renderPalette();
    fireEvent.keyDown(document.documentElement, { key: "k", code: "KeyK", ctrlKey: true });
    expect(await screen.findByRole("textbox", { name: "Go to" })).toBeInTheDocument();
  });
});
