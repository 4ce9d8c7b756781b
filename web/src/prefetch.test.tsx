import { MantineProvider } from "@mantine/core";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen } from "@testing-library/react";
import { RouterProvider, createMemoryRouter } from "react-router";
import { afterEach, describe, expect, it, vi } from "vitest";
import RunsPage from "./pages/runs/RunsPage";
import { parseRunFilters } from "./pages/runs/filters";
import { runsQuery } from "./pages/runs/queries";
import { prefetchRoute } from "./prefetch";
import { routes } from "./routes";
import { clearToken, setToken } from "./session/session";

const page = (content: object[], totalElements = content.length) => ({
  content,
  number: 0,
  size: 25,
  totalElements,
  totalPages: Math.max(1, Math.ceil(totalElements / 25)),
  numberOfElements: content.length,
  first: true,
  last: true,
  empty: content.length === 0,
  sort: { sorted: true, unsorted: false, empty: false },
  pageable: {},
});

const json = (body: unknown) => new Response(JSON.stringify(body), { status: 200, headers: { "Content-Type": "application/json" } });

/** serve answers the API's reads of the shell and the runs page, keeping every URL asked for. */
function serve(permissions: string[]) {
  const calls: URL[] = [];
  vi.stubGlobal(
    "fetch",
    vi.fn(async (req: Request) => {
      const u = new URL(req.url);
      calls.push(u);
      expect(req.headers.get("Authorization")).toBe("Bearer secret");
      if (u.pathname === "/api/v2/profile") return json({ name: "ada", principalType: "user", teams: [{ name: "infra" }], permissions });
      if (u.pathname === "/api/v2/team/query") return json(page([{ name: "infra" }]));
      if (u.pathname.endsWith("/workflow/query")) return json(page([{ name: "build" }]));
      if (u.pathname.endsWith("/workflowrun/query"))
        return json(page([{ id: "0193-run", workflowName: "build", status: "failed", trigger: "manual" }], 26));
      return new Response("{}", { status: 404 });
    }),
  );
  return calls;
}

const asked = (calls: URL[], path: string) => calls.filter((u) => u.pathname === path);
const client = () => new QueryClient({ defaultOptions: { queries: { retry: false } } });

afterEach(() => {
  vi.unstubAllGlobals();
  clearToken();
});

describe("prefetchRoute", () => {
  it("starts the shell's and the runs page's reads for the address, before anything renders", async () => {
    const calls = serve(["**/*"]);
    setToken("secret");
    const qc = client();
    const search = "?statuses=failed,timedout&page=2";
    prefetchRoute(qc, routes, { pathname: "/teams/infra/runs", search });

    await vi.waitFor(() => expect(asked(calls, "/api/v2/team/query")).toHaveLength(1));
    expect(asked(calls, "/api/v2/profile")).toHaveLength(1);
    expect(asked(calls, "/api/v2/team/infra/workflow/query")).toHaveLength(1);
    const runs = asked(calls, "/api/v2/team/infra/workflowrun/query");
    expect(runs).toHaveLength(1);
    expect(runs[0]!.searchParams.get("statuses")).toBe("failed,timedout");
    expect(runs[0]!.searchParams.get("page")).toBe("1");
    // Under the key the page reads.
    const key = runsQuery("infra", parseRunFilters(new URLSearchParams(search))).queryKey;
    await vi.waitFor(() => expect(qc.getQueryData(key)?.totalElements).toBe(26));
  });

  it("leaves the list of every team to administrators", async () => {
    const calls = serve(["infra/**:read"]);
    setToken("secret");
    const qc = client();
    prefetchRoute(qc, routes, { pathname: "/teams/infra/runs", search: "" });
    await vi.waitFor(() => expect(qc.getQueryState(["profile", "secret"])?.status).toBe("success"));
    await vi.waitFor(() => expect(asked(calls, "/api/v2/team/infra/workflowrun/query")).toHaveLength(1));
    expect(asked(calls, "/api/v2/team/query")).toHaveLength(0);
  });

  it("reads nothing for a visitor not signed in", () => {
    const calls = serve([]);
    prefetchRoute(client(), routes, { pathname: "/teams/infra/runs", search: "" });
    expect(calls).toHaveLength(0);
  });

  it("hands the runs page its reads: the page does not ask again", async () => {
    const calls = serve(["**/*"]);
    setToken("secret");
    const qc = client();
    prefetchRoute(qc, routes, { pathname: "/teams/infra/runs", search: "?statuses=failed" });
    const router = createMemoryRouter([{ path: "/teams/:team/runs", element: <RunsPage /> }], {
      initialEntries: ["/teams/infra/runs?statuses=failed"],
    });
    render(
      <MantineProvider>
        <QueryClientProvider client={qc}>
          <RouterProvider router={router} />
        </QueryClientProvider>
      </MantineProvider>,
    );
    expect(await screen.findByText("26 runs")).toBeInTheDocument();
    expect(asked(calls, "/api/v2/team/infra/workflowrun/query")).toHaveLength(1);
    expect(asked(calls, "/api/v2/team/infra/workflow/query")).toHaveLength(1);
  });
});
