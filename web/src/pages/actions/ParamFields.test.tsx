import { MantineProvider } from "@mantine/core";
import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { useState } from "react";
import { describe, expect, it } from "vitest";
import { checkForm, type FormValue, type Param } from "./formRules";
import { initialValues, ParamFields } from "./ParamFields";

// jsdom has no document.fonts, which Mantine's autosized text areas listen to.
if (!("fonts" in document)) {
  Object.defineProperty(document, "fonts", { value: { addEventListener() {}, removeEventListener() {} } });
}

const form: Param[] = [
  { name: "version", label: "Version", type: "text", required: true },
  { name: "key", label: "Deploy key", type: "password", default: "********" },
  { name: "notes", label: "Notes", type: "textarea", default: "none" },
  { name: "dry", label: "Dry run", type: "boolean", default: true },
  { name: "locked", label: "Locked", type: "text", readOnly: true, default: "fixed" },
];

/** Form is a manual form as ActionPage holds it: values in state, checked on submit. */
function Form({ onSend }: { onSend: (v: Record<string, unknown>) => void }) {
  const [values, setValues] = useState<Record<string, FormValue>>(() => initialValues(form));
  const [errors, setErrors] = useState<Record<string, string>>({});
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        const c = checkForm(form, values);
        setErrors(c.errors);
        if (Object.keys(c.errors).length === 0) onSend(c.send);
      }}
    >
      <ParamFields form={form} values={values} errors={errors} onChange={(n, v) => setValues((s) => ({ ...s, [n]: v }))} />
      <button type="submit">Complete</button>
    </form>
  );
}

describe("ParamFields", () => {
  it("renders each type, masks secrets, and shows a missing required value on its field", async () => {
    const sent: Record<string, unknown>[] = [];
    render(
      <MantineProvider>
        <Form onSend={(v) => sent.push(v)} />
      </MantineProvider>,
    );
    const user = userEvent.setup();
    expect(screen.getByLabelText("Deploy key")).toHaveAttribute("type", "password");
    expect(screen.getByLabelText("Deploy key")).toHaveValue("");
    expect(screen.getByRole("textbox", { name: "Notes" })).toHaveValue("none");
    expect(screen.getByRole("checkbox", { name: "Dry run" })).toBeChecked();
    expect(screen.getByRole("textbox", { name: "Locked" })).toBeDisabled();

    await user.click(screen.getByRole("button", { name: "Complete" }));
    expect(screen.getByText("Version is required")).toBeInTheDocument();
    expect(sent).toHaveLength(0);

    await user.type(screen.getByRole("textbox", { name: /Version/ }), "1.4");
    await user.click(screen.getByRole("checkbox", { name: "Dry run" }));
    await user.click(screen.getByRole("button", { name: "Complete" }));
    expect(sent).toEqual([{ version: "1.4", notes: "none", dry: false, locked: "fixed" }]);
  }, 30_000); // typing through user-event is slow on a busy machine, not the form
});
