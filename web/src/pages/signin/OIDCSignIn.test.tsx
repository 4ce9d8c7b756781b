import { MantineProvider } from "@mantine/core";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { authConfigKey } from "../../session/oidc";
import { OIDCSignInButton } from "./OIDCSignIn";

function renderWith(answer: () => Response) {
  vi.stubGlobal(
    "fetch",
    vi.fn(async (req: Request) => {
      expect(new URL(req.url).pathname).toBe("/api/v2/auth/config");
      return answer();
    }),
  );
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <MantineProvider>
      <QueryClientProvider client={client}>
        <OIDCSignInButton next="/teams/infra/runs" />
        <p>the token form</p>
      </QueryClientProvider>
    </MantineProvider>,
  );
  return client;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("OIDCSignInButton", () => {
  it("offers the server's issuer by its host", async () => {
    renderWith(() =>
      Response.json({ oidc: { issuer: "https://login.example.com/realms/baton", clientId: "baton", scopes: ["openid"], bearer: "idToken" } }),
    );
    expect(await screen.findByRole("button", { name: "Sign in with login.example.com" })).toBeEnabled();
  });

  it("offers nothing when the server signs in with tokens only", async () => {
    const client = renderWith(() => Response.json({}));
    await vi.waitFor(() => expect(client.getQueryState(authConfigKey)?.status).toBe("success"));
    await screen.findByText("the token form");
    expect(screen.queryByRole("button")).toBeNull();
  });

  it("says why when the server's answer is an error", async () => {
    renderWith(() =>
      Response.json({ status: 503, error: "Service Unavailable", code: 0, reason: "SERVICE_UNAVAILABLE", message: "Down." }, { status: 503 }),
    );
    expect(await screen.findByRole("alert")).toHaveTextContent("SERVICE_UNAVAILABLE");
  });
});
