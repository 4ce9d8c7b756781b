import { Button, Card, Center, Group, Loader, NumberInput, PasswordInput, Select, Stack, Switch, Text, TextInput, Title } from "@mantine/core";
import { notifications } from "@mantine/notifications";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, call, type Schemas } from "../../api/client";
import { ErrorAlert } from "../../api/ErrorAlert";
import { AdminFrame } from "./AdminFrame";
import { MASK } from "./ParametersPanel";

type Setting = Schemas["Setting"];
type Config = Schemas["SettingConfig"];

/** AdminSettingsPage renders the API's settings document as a form, a card per section. */
export default function AdminSettingsPage() {
  const settings = useQuery({ queryKey: ["settings"], queryFn: () => call(api.GET("/api/v2/settings")) });
  return (
    <AdminFrame title="Settings">
      {settings.error ? (
        <ErrorAlert error={settings.error} title="The settings could not be read" />
      ) : !settings.data ? (
        <Center p="xl">
          <Loader aria-label="Loading" />
        </Center>
      ) : settings.data.length === 0 ? (
        <Text c="dimmed">The instance has no settings.</Text>
      ) : (
        settings.data.map((s) => <Section key={`${s.key}:${JSON.stringify(s.config)}`} setting={s} />)
      )}
    </AdminFrame>
  );
}

/** changed lists the values of a section the form changed, as PUT /settings takes them. */
export function changed(config: Config[], values: Record<string, string>): { key: string; value: string | number | boolean }[] {
  const out: { key: string; value: string | number | boolean }[] = [];
  for (const c of config) {
    const key = c.key ?? "";
    const v = values[key];
    if (v === undefined) continue;
    if (c.type === "secured") {
      if (v !== "") out.push({ key, value: v });
      continue;
    }
    if (v === (c.value ?? "")) continue;
    if (c.type === "boolean") out.push({ key, value: v === "true" });
    else if (c.type === "number" && v !== "") out.push({ key, value: Number(v) });
    else out.push({ key, value: v });
  }
  return out;
}

function Section({ setting }: { setting: Setting }) {
  const client = useQueryClient();
  const config = setting.config ?? [];
  const initial = Object.fromEntries(config.map((c) => [c.key ?? "", c.type === "secured" ? "" : (c.value ?? "")]));
  const [values, setValues] = useState<Record<string, string>>(initial);
  const diff = changed(config, values);
  const save = useMutation({
    mutationFn: () => call(api.PUT("/api/v2/settings", { body: [{ key: setting.key ?? "", config: diff }] })),
    onSuccess: (all) => {
      client.setQueryData(["settings"], all);
      notifications.show({ color: "green", message: `${setting.name || setting.key} saved.` });
    },
  });
  const set = (key: string, v: string) => setValues((old) => ({ ...old, [key]: v }));
  const headingId = `setting-${setting.key}`;
  return (
    <Card withBorder component="section" aria-labelledby={headingId}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <Stack>
          <div>
            <Title order={2} size="h4" id={headingId}>
              {setting.name || setting.key}
            </Title>
            {setting.description && (
              <Text size="sm" c="dimmed">
                {setting.description}
              </Text>
            )}
          </div>
          {config.map((c) => (
            <Field key={c.key} config={c} value={values[c.key ?? ""] ?? ""} onChange={(v) => set(c.key ?? "", v)} />
          ))}
          {save.error && <ErrorAlert error={save.error} />}
          <Group justify="flex-end">
            <Button variant="default" disabled={diff.length === 0} onClick={() => setValues(initial)}>
              Reset
            </Button>
            <Button type="submit" loading={save.isPending} disabled={diff.length === 0}>
              Save {setting.name || setting.key}
            </Button>
          </Group>
        </Stack>
      </form>
    </Card>
  );
}

function Field({ config: c, value, onChange }: { config: Config; value: string; onChange: (v: string) => void }) {
  const label = c.label || c.key;
  const description = [c.description, c.defaultValue ? `Default: ${c.defaultValue}.` : ""].filter(Boolean).join(" ");
  switch (c.type) {
    case "boolean":
      return <Switch label={label} description={description} checked={value === "true"} onChange={(e) => onChange(e.currentTarget.checked ? "true" : "false")} />;
    case "number":
      return <NumberInput label={label} description={description} value={value} onChange={(v) => onChange(String(v))} required={c.required} />;
    case "select":
      return (
        <Select
          label={label}
          description={description}
          data={(c.options ?? []).map((o) => ({ value: String(o.key ?? ""), label: String(o.value ?? o.key ?? "") }))}
          value={value || null}
          onChange={(v) => onChange(v ?? "")}
          comboboxProps={{ withinPortal: true }}
        />
      );
    case "secured":
      return (
        <PasswordInput
          label={label}
          description={`${description} ${c.value === MASK ? "A secret is stored and never shown: leave empty to keep it." : "No secret stored."}`.trim()}
          value={value}
          onChange={(e) => onChange(e.currentTarget.value)}
          autoComplete="new-password"
        />
      );
    default:
      return <TextInput label={label} description={description} value={value} onChange={(e) => onChange(e.currentTarget.value)} required={c.required} />;
  }
}
