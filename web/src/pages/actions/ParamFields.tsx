import { Checkbox, MultiSelect, NumberInput, PasswordInput, Select, Stack, Textarea, TextInput } from "@mantine/core";
import { initialValue, isSecret, paramName, type FormValue, type Param } from "./formRules";

/** initialValues are a form's fields at their defaults. */
export function initialValues(form: Param[]): Record<string, FormValue> {
  return Object.fromEntries(form.map((p) => [paramName(p), initialValue(p)]));
}

interface Props {
  form: Param[];
  values: Record<string, FormValue>;
  errors: Record<string, string>;
  onChange: (name: string, value: FormValue) => void;
  disabled?: boolean;
}

/**
 * ParamFields renders parameter definitions as inputs: each type its own (text, area,
 * number, switch, options), secrets masked, required fields marked, the errors on their
 * fields. Values stay in the caller's state; formRules checks them.
 */
export function ParamFields({ form, values, errors, onChange, disabled }: Props) {
  return (
    <Stack gap="sm">
      {form.map((p) => {
        const name = paramName(p);
        return (
          <Field
            key={name}
            p={p}
            value={values[name] ?? initialValue(p)}
            error={errors[name]}
            onChange={(v) => onChange(name, v)}
            disabled={disabled || p.readOnly === true}
          />
        );
      })}
    </Stack>
  );
}

function Field({
  p,
  value,
  error,
  onChange,
  disabled,
}: {
  p: Param;
  value: FormValue;
  error?: string;
  onChange: (v: FormValue) => void;
  disabled: boolean;
}) {
  const name = paramName(p);
  const common = {
    label: p.label || name,
    description: p.helpertext || p.description || undefined,
    placeholder: p.placeholder || undefined,
    required: p.required === true,
    error: error ? `${p.label || name} ${error}` : undefined,
    disabled,
    name,
  };
  const options = (p.options ?? []).map((o) => ({ value: o.key ?? "", label: o.value || o.key || "" }));
  const text = typeof value === "string" ? value : "";
  if (isSecret(p)) {
    return <PasswordInput {...common} value={text} onChange={(e) => onChange(e.currentTarget.value)} autoComplete="off" />;
  }
  switch (p.type) {
    case "boolean":
      return (
        <Checkbox
          label={common.label}
          description={common.description}
          error={common.error}
          disabled={disabled}
          name={name}
          checked={value === true}
          onChange={(e) => onChange(e.currentTarget.checked)}
        />
      );
    case "number":
      return (
        <NumberInput
          {...common}
          value={text}
          onChange={(v) => onChange(String(v))}
          allowDecimal
          hideControls
        />
      );
    case "select":
      return (
        <Select
          {...common}
          data={options}
          value={text === "" ? null : text}
          onChange={(v) => onChange(v ?? "")}
          clearable={!p.required}
          comboboxProps={{ withinPortal: true }}
        />
      );
    case "multiselect":
      return (
        <MultiSelect
          {...common}
          data={options}
          value={Array.isArray(value) ? value : []}
          onChange={(v) => onChange(v)}
          clearable
          comboboxProps={{ withinPortal: true }}
        />
      );
    case "textarea":
    case "json":
    case "texteditor":
    case "texteditor::javascript":
    case "texteditor::text":
    case "texteditor::shell":
    case "texteditor::yaml":
      return (
        <Textarea
          {...common}
          value={text}
          onChange={(e) => onChange(e.currentTarget.value)}
          autosize
          minRows={3}
          maxRows={16}
          styles={p.type === "textarea" ? undefined : { input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
        />
      );
  }
  return (
    <TextInput
      {...common}
      type={p.type === "email" ? "email" : p.type === "url" ? "url" : "text"}
      value={text}
      onChange={(e) => onChange(e.currentTarget.value)}
    />
  );
}
