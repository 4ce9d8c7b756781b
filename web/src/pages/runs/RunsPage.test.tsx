import { MantineProvider } from "@mantine/core";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { RouterProvider, createMemoryRouter } from "react-router";
import { setToken } from "../../session/session";
import RunsPage from "./RunsPage";

const page = (content: object[], totalElements = content.length) => ({
  content,
  number: 0,
  size: 25,
  totalElements,
  totalPages: Math.max(1, Math.ceil(totalElements / 25)),
  numberOfElements: content.length,
  first: true,
  last: totalElements <= 25,
  empty: content.length === 0,
  sort: { sorted: true, unsorted: false, empty: false },
  pageable: {},
});

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });

function renderAt(url: string, answer: (u: URL) => Response) {
  const calls: URL[] = [];
  vi.stubGlobal(
    "fetch",
    vi.fn(async (req: Request) => {
      const u = new URL(req.url);
      calls.push(u);
      expect(req.headers.get("Authorization")).toBe("Bearer secret");
      if (u.pathname.endsWith("/workflow/query")) return json(page([{ name: "build" }]));
      return answer(u);
    }),
  );
  setToken("secret");
  const router = createMemoryRouter([{ path: "/teams/:team/runs", element: <RunsPage /> }], { initialEntries: [url] });
  render(
    <MantineProvider>
      <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </MantineProvider>,
  );
  return calls;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("RunsPage", () => {
  it("asks the API for the URL's filters and lists what it answers", async () => {
    const calls = renderAt("/teams/infra/runs?statuses=failed,timedout&labels=env%3Dprod&page=2", () =>
      json(
        page(
          [
            {
              id: "0193-run",
              workflowName: "build",
              workflowDisplayName: "Build",
              status: "failed",
              trigger: "schedule",
              startTime: "2026-12-07T10:00:00.000Z",
              duration: 65_000,
            },
          ],
          26,
        ),
      ),
    );
    const table = await screen.findByRole("table", { name: "Runs" });
    const row = within(table).getAllByRole("row")[1]!;
    expect(row).toHaveTextContent("failed");
    expect(row).toHaveTextContent("Build");
    expect(row).toHaveTextContent("schedule");
    expect(row).toHaveTextContent("1 min 5 s");
    expect(within(row).getByRole("link", { name: "0193-run" })).toHaveAttribute("href", "/teams/infra/runs/0193-run");
    expect(screen.getByText("26 runs")).toBeInTheDocument();

    const runs = calls.find((u) => u.pathname === "/api/v2/team/infra/workflowrun/query");
    expect(runs).toBeDefined();
    expect(runs!.searchParams.get("statuses")).toBe("failed,timedout");
    expect(runs!.searchParams.get("labels")).toBe("env=prod");
    expect(runs!.searchParams.get("page")).toBe("1");
    expect(runs!.searchParams.get("limit")).toBe("25");
    expect(runs!.searchParams.get("order")).toBe("DESC");
  });

  it("shows the API's refusal in its words", async () => {
    renderAt("/teams/infra/runs?labels=bad%20key%3Dx", () =>
      json(
        {
          timestamp: "2026-12-07T10:00:00.000Z",
          status: 400,
          error: "Bad Request",
          code: 1001,
          reason: "QUERY_INVALID_FILTERS",
          message: "Label key 'bad key' is not valid.",
          path: "/api/v2/team/infra/workflowrun/query",
        },
        400,
      ),
    );
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("QUERY_INVALID_FILTERS");
    expect(alert).toHaveTextContent("Label key 'bad key' is not valid.");
  });

  it("says when no run matches", async () => {
    renderAt("/teams/infra/runs?statuses=failed", () => json(page([])));
    expect(await screen.findByText("No run matches these filters.")).toBeInTheDocument();
  });
});
