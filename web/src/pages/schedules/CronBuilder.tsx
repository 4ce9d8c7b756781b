import { Group, Select, SimpleGrid, Stack, Text, TextInput } from "@mantine/core";
import { cronFields, cronPresets, presetOf, splitCron, withField } from "./cron";

/**
 * CronBuilder edits a cron expression three ways that stay in step: a preset, the five
 * fields, and the raw expression (which alone can say six fields or `@every 1h`).
 */
export function CronBuilder({ value, onChange, error }: { value: string; onChange: (v: string) => void; error?: string }) {
  const parts = splitCron(value);
  const preset = presetOf(value);
  return (
    <Stack gap="xs">
      <Select
        label="Preset"
        placeholder="Custom"
        data={cronPresets.map((p) => ({ value: p.cron, label: p.label }))}
        value={preset}
        onChange={(v) => v && onChange(v)}
        allowDeselect={false}
        w={{ base: "100%", sm: 320 }}
      />
      <fieldset style={{ border: 0, padding: 0, margin: 0 }}>
        <Text component="legend" size="sm" fw={500} mb={4}>
          Fields
        </Text>
        <SimpleGrid cols={{ base: 2, sm: 5 }} spacing="xs">
          {cronFields.map((f, i) => (
            <TextInput
              key={f.key}
              label={f.label}
              description={f.hint}
              value={parts ? parts[i] : ""}
              placeholder={parts ? "*" : "—"}
              disabled={!parts && value.trim() !== ""}
              onChange={(e) => onChange(withField(value, i, e.currentTarget.value))}
              styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
            />
          ))}
        </SimpleGrid>
        {!parts && value.trim() !== "" && (
          <Text size="xs" c="dimmed" mt={4}>
            This expression is not five fields: edit it below.
          </Text>
        )}
      </fieldset>
      <Group align="end">
        <TextInput
          label="Cron expression"
          description="robfig/cron: 5 fields (or 6 with seconds first), names of days and months, @hourly…@yearly, @every 90m"
          value={value}
          onChange={(e) => onChange(e.currentTarget.value)}
          error={error}
          required
          w={{ base: "100%", sm: 480 }}
          styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
        />
      </Group>
    </Stack>
  );
}
