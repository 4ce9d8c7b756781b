import { MantineProvider } from "@mantine/core";
import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { ErrorAlert } from "./ErrorAlert";
import { ApiError } from "./errors";

describe("ErrorAlert", () => {
  it("shows the contract's reason, message, field errors and trace", () => {
    const e = new ApiError(400, "WORKFLOW_INVALID", "The workflow is not valid.", {
      timestamp: "2026-11-22T10:00:00.000Z",
      status: 400,
      error: "Bad Request",
      code: 1209,
      reason: "WORKFLOW_INVALID",
      message: "The workflow is not valid.",
      path: "/api/v2/team/infra/workflow/build",
      traceId: "abc123",
      errors: [{ field: "tasks[0].taskRef", message: "no task named 'lint'" }],
    });
    render(
      <MantineProvider>
        <ErrorAlert error={e} title="Saving failed" />
      </MantineProvider>,
    );
    const alert = screen.getByRole("alert");
    expect(alert).toHaveTextContent("Saving failed: WORKFLOW_INVALID");
    expect(alert).toHaveTextContent("The workflow is not valid.");
    expect(alert).toHaveTextContent("tasks[0].taskRef no task named 'lint'");
    expect(alert).toHaveTextContent("Trace abc123");
  });
});
