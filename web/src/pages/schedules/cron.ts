// The cron builder's model: an expression is the source of truth (robfig/cron v3's dialect,
// as the API reads it); the builder's fields are its five parts when it has five, and a
// preset is an expression with a name.

export const cronFields = [
  { key: "minute", label: "Minute", hint: "0-59" },
  { key: "hour", label: "Hour", hint: "0-23" },
  { key: "dom", label: "Day", hint: "1-31" },
  { key: "month", label: "Month", hint: "1-12 or JAN-DEC" },
  { key: "dow", label: "Weekday", hint: "0-6 or SUN-SAT" },
] as const;

export type CronParts = [string, string, string, string, string];

export const cronPresets: { label: string; cron: string }[] = [
  { label: "Every 15 minutes", cron: "*/15 * * * *" },
  { label: "Every hour", cron: "0 * * * *" },
  { label: "Every day at 09:00", cron: "0 9 * * *" },
  { label: "Weekdays at 09:00", cron: "0 9 * * MON-FRI" },
  { label: "Every Monday at 09:00", cron: "0 9 * * MON" },
  { label: "The first of each month at 00:00", cron: "0 0 1 * *" },
];

/** splitCron answers the five fields of an expression that has five, else null (the
 * builder then edits only the raw expression: six fields, @daily, @every 1h…). */
export function splitCron(expr: string): CronParts | null {
  const parts = expr.trim().split(/\s+/);
  if (parts.length !== 5 || parts.some((p) => p === "" || p.startsWith("@"))) return null;
  return parts as CronParts;
}

/** withField answers the expression with field i set to value (empty reads as `*`). */
export function withField(expr: string, i: number, value: string): string {
  const parts = splitCron(expr) ?? ["*", "*", "*", "*", "*"];
  const next = [...parts];
  next[i] = value.trim().replace(/\s+/g, "") || "*";
  return next.join(" ");
}

/** presetOf names the preset an expression is, or null. */
export function presetOf(expr: string): string | null {
  const norm = expr.trim().replace(/\s+/g, " ");
  return cronPresets.find((p) => p.cron === norm)?.cron ?? null;
}
