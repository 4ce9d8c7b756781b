// Dates in a schedule's time zone, with nothing but Intl: a schedule fires in its zone, so
// its fires, its calendar and a backfill window are read and written in that zone.

/** zones lists the IANA zones the browser knows, UTC included. */
export function zones(): string[] {
  let list: string[] = [];
  try {
    list = Intl.supportedValuesOf("timeZone");
  } catch {
    list = [];
  }
  return list.includes("UTC") ? list : ["UTC", ...list];
}

/** localZone is the browser's zone, the default of a new schedule. */
export function localZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

export interface Wall {
  year: number;
  month: number; // 1-12
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: number; // 0 Sunday … 6 Saturday
}

const weekdays: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };
const formatters = new Map<string, Intl.DateTimeFormat>();

/** wallOf is the wall clock of instant ms in zone. */
export function wallOf(ms: number, zone: string): Wall {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
      weekday: "short",
    });
    formatters.set(zone, f);
  }
  const get: Record<string, string> = {};
  for (const p of f.formatToParts(new Date(ms))) get[p.type] = p.value;
  return {
    year: Number(get.year),
    month: Number(get.month),
    day: Number(get.day),
    hour: Number(get.hour) % 24,
    minute: Number(get.minute),
    second: Number(get.second),
    weekday: weekdays[get.weekday ?? ""] ?? 0,
  };
}

/** offsetOf is zone's offset from UTC at instant ms, in milliseconds. */
export function offsetOf(ms: number, zone: string): number {
  const w = wallOf(ms, zone);
  const asUTC = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return asUTC - Math.floor(ms / 1000) * 1000;
}

/**
 * instantOf is the instant the wall clock reads in zone (month 1-12). A time skipped by a
 * change to summer time reads as the instant after the gap; one that happens twice, the
 * first.
 */
export function instantOf(year: number, month: number, day: number, hour: number, minute: number, zone: string): number {
  const local = Date.UTC(year, month - 1, day, hour, minute);
  const day1 = 86_400_000;
  // The zone's offsets a day before and after: the same unless the clocks change between.
  const before = local - offsetOf(local - day1, zone);
  const after = local - offsetOf(local + day1, zone);
  const reads = (ms: number) => {
    const w = wallOf(ms, zone);
    return w.year === year && w.month === month && w.day === day && w.hour === hour && w.minute === minute;
  };
  const fits = [before, after].filter(reads);
  // In a gap, no instant reads so: the offset before the change moves it past the gap.
  return fits.length > 0 ? Math.min(...fits) : before;
}

/** parseLocal reads "YYYY-MM-DDTHH:mm" (a datetime-local input) as a wall clock in zone. */
export function parseLocal(s: string, zone: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(s);
  if (!m) return null;
  return instantOf(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), zone);
}

/** toLocalInput writes instant ms as a datetime-local input's value in zone. */
export function toLocalInput(ms: number, zone: string): string {
  const w = wallOf(ms, zone);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${w.year}-${p(w.month)}-${p(w.day)}T${p(w.hour)}:${p(w.minute)}`;
}

/** formatIn writes an instant as a date and time in zone, with the zone's abbreviation. */
export function formatIn(ms: number | string, zone: string): string {
  const d = typeof ms === "string" ? new Date(ms) : new Date(ms);
  try {
    return new Intl.DateTimeFormat(undefined, {
      timeZone: zone,
      weekday: "short",
      year: "numeric",
      month: "short",
      day: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
      timeZoneName: "short",
    }).format(d);
  } catch {
    return d.toISOString();
  }
}

/** timeIn writes an instant's time of day in zone (the calendar's cells). */
export function timeIn(ms: number, zone: string): string {
  return new Intl.DateTimeFormat(undefined, { timeZone: zone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(
    new Date(ms),
  );
}

/** monthGrid is the weeks (Monday first) of a month, each day as "YYYY-MM-DD" or null
 * outside the month. */
export function monthGrid(year: number, month: number): (string | null)[][] {
  const first = new Date(Date.UTC(year, month - 1, 1));
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const lead = (first.getUTCDay() + 6) % 7;
  const cells: (string | null)[] = Array.from({ length: lead }, () => null);
  const p = (n: number) => String(n).padStart(2, "0");
  for (let d = 1; d <= days; d++) cells.push(`${year}-${p(month)}-${p(d)}`);
  while (cells.length % 7 !== 0) cells.push(null);
  const weeks: (string | null)[][] = [];
  for (let i = 0; i < cells.length; i += 7) weeks.push(cells.slice(i, i + 7));
  return weeks;
}

/** dayIn is the "YYYY-MM-DD" of instant ms in zone. */
export function dayIn(ms: number, zone: string): string {
  const w = wallOf(ms, zone);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${w.year}-${p(w.month)}-${p(w.day)}`;
}
