import { MantineProvider } from "@mantine/core";
import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { ParamForm, type ParamDefinition } from "./ParamForm";

// jsdom has no document.fonts, which the autosizing text areas listen to.
if (!("fonts" in document)) {
  Object.defineProperty(document, "fonts", {
    configurable: true,
    value: { addEventListener: () => undefined, removeEventListener: () => undefined, ready: Promise.resolve() },
  });
}

const defs: ParamDefinition[] = [
  { name: "url", label: "URL", type: "text", required: true, helpertext: "Where to send it." },
  { name: "token", label: "Token", type: "password" },
  { name: "verbose", label: "Verbose", type: "boolean", default: true },
  { name: "method", label: "Method", type: "select", options: [{ key: "GET", value: "GET" }, { key: "POST", value: "POST" }] },
  { name: "count", label: "Count", type: "number", default: 3 },
  { key: "script", label: "Script", type: "texteditor::shell" },
];

function renderForm(values: Record<string, unknown>, onChange = vi.fn()) {
  render(
    <MantineProvider>
      <ParamForm params={defs} values={values} onChange={onChange} />
    </MantineProvider>,
  );
  return onChange;
}

describe("ParamForm", { timeout: 30_000 }, () => {
  it("builds a field of each definition's type, marking required ones and masking passwords", () => {
    renderForm({ token: "********" });
    const url = screen.getByRole("textbox", { name: /URL/ });
    expect(url).toBeRequired();
    expect(screen.getByText("Where to send it.")).toBeInTheDocument();
    expect(screen.getByLabelText("Token")).toHaveAttribute("type", "password");
    expect(screen.getByRole("switch", { name: "Verbose" })).toBeChecked();
    expect(screen.getByRole("textbox", { name: "Count" })).toHaveAttribute("placeholder", "Default: 3");
    expect(screen.getByRole("textbox", { name: "Script" })).toBeInTheDocument();
    expect(screen.getAllByLabelText("Method").length).toBeGreaterThan(0);
  });

  it("answers values by the parameter's name, v4's key included, and empties as undefined", () => {
    const onChange = renderForm({ script: "echo" });
    fireEvent.change(screen.getByRole("textbox", { name: /URL/ }), { target: { value: "https://x" } });
    expect(onChange).toHaveBeenLastCalledWith("url", "https://x");
    fireEvent.change(screen.getByRole("textbox", { name: "Script" }), { target: { value: "" } });
    expect(onChange).toHaveBeenLastCalledWith("script", undefined);
    fireEvent.click(screen.getByRole("switch", { name: "Verbose" }));
    expect(onChange).toHaveBeenLastCalledWith("verbose", false);
  });

  it("says when a task takes no parameters", () => {
    render(
      <MantineProvider>
        <ParamForm params={[]} values={{}} onChange={() => undefined} />
      </MantineProvider>,
    );
    expect(screen.getByText("This task takes no parameters.")).toBeInTheDocument();
  });
});
