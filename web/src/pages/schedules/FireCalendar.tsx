import { ActionIcon, Center, Group, Loader, Stack, Table, Text, Title } from "@mantine/core";
import { IconChevronLeft, IconChevronRight } from "@tabler/icons-react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useSearchParams } from "react-router";
import { api, call } from "../../api/client";
import { ErrorAlert } from "../../api/ErrorAlert";
import { TintBadge } from "../actions/common";
import { dayIn, instantOf, monthGrid, timeIn, wallOf } from "./zone";

const weekdayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
/** How many fire times a day's cell lists before "+n more". */
const PER_DAY = 4;

/** readMonth reads ?month=YYYY-MM, else the month it is now in zone. */
function readMonth(v: string | null, zone: string): { year: number; month: number } {
  const m = /^(\d{4})-(\d{2})$/.exec(v ?? "");
  if (m && Number(m[2]) >= 1 && Number(m[2]) <= 12) return { year: Number(m[1]), month: Number(m[2]) };
  const w = wallOf(Date.now(), zone);
  return { year: w.year, month: w.month };
}

const monthParam = (y: number, m: number) => `${y}-${String(m).padStart(2, "0")}`;

/**
 * FireCalendar is a month of a schedule's fires (GET /schedule/calendars), laid out in its
 * zone: each day lists its fire times. The month is in the URL (?month=2026-12).
 */
export function FireCalendar({ team, scheduleId, zone }: { team: string; scheduleId: string; zone: string }) {
  const [search, setSearch] = useSearchParams();
  const { year, month } = readMonth(search.get("month"), zone);
  const from = instantOf(year, month, 1, 0, 0, zone);
  const to = (month === 12 ? instantOf(year + 1, 1, 1, 0, 0, zone) : instantOf(year, month + 1, 1, 0, 0, zone)) - 1;
  const cal = useQuery({
    queryKey: ["schedules", team, "calendar", scheduleId, from, to],
    queryFn: () =>
      call(
        api.GET("/api/v2/team/{team}/schedule/calendars", {
          params: { path: { team }, query: { schedules: [scheduleId], fromDate: from, toDate: to } },
        }),
      ),
    placeholderData: keepPreviousData,
  });
  const byDay = new Map<string, number[]>();
  for (const d of cal.data?.[0]?.dates ?? []) {
    const ms = new Date(d).getTime();
    const day = dayIn(ms, zone);
    byDay.set(day, [...(byDay.get(day) ?? []), ms]);
  }
  const total = cal.data?.[0]?.dates?.length ?? 0;
  const title = new Intl.DateTimeFormat(undefined, { month: "long", year: "numeric", timeZone: "UTC" }).format(
    new Date(Date.UTC(year, month - 1, 1)),
  );
  const go = (delta: number) => {
    const idx = year * 12 + (month - 1) + delta;
    const next = new URLSearchParams(search);
    next.set("month", monthParam(Math.floor(idx / 12), (idx % 12) + 1));
    setSearch(next, { replace: true });
  };
  const today = dayIn(Date.now(), zone);
  return (
    <Stack>
      <Group justify="space-between">
        <Group gap="xs">
          <ActionIcon variant="default" aria-label="Previous month" onClick={() => go(-1)}>
            <IconChevronLeft size={16} aria-hidden />
          </ActionIcon>
          <Title order={2} size="h4" miw={180} ta="center">
            {title}
          </Title>
          <ActionIcon variant="default" aria-label="Next month" onClick={() => go(1)}>
            <IconChevronRight size={16} aria-hidden />
          </ActionIcon>
          {cal.isFetching && <Loader size="xs" aria-label="Loading the fires" />}
        </Group>
        <Text size="sm" c="dimmed">
          {total === 1000 ? "The first 1,000 fires" : `${total} fire${total === 1 ? "" : "s"}`} in {zone}
        </Text>
      </Group>
      {cal.error && <ErrorAlert error={cal.error} title="The calendar could not be read" />}
      {cal.isPending ? (
        <Center p="xl">
          <Loader aria-label="Loading" />
        </Center>
      ) : (
        <Table withTableBorder withColumnBorders layout="fixed" aria-label={`Fires in ${title}`}>
          <Table.Thead>
            <Table.Tr>
              {weekdayNames.map((d) => (
                <Table.Th key={d}>
                  <abbr title={d} style={{ textDecoration: "none" }}>
                    {d.slice(0, 3)}
                  </abbr>
                </Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {monthGrid(year, month).map((week, i) => (
              <Table.Tr key={i}>
                {week.map((day, j) => {
                  const fires = day ? (byDay.get(day) ?? []) : [];
                  return (
                    <Table.Td key={j} valign="top" h={96} data-day={day ?? undefined} bg={day === today ? "var(--mantine-color-default-hover)" : undefined}>
                      {day && (
                        <Stack gap={2}>
                          <Text size="sm" fw={day === today ? 700 : 500}>
                            {Number(day.slice(8))}
                          </Text>
                          {fires.slice(0, PER_DAY).map((ms) => (
                            <TintBadge key={ms} size="sm" radius="sm">
                              {timeIn(ms, zone)}
                            </TintBadge>
                          ))}
                          {fires.length > PER_DAY && (
                            <Text size="xs" c="dimmed">
                              +{fires.length - PER_DAY} more
                            </Text>
                          )}
                        </Stack>
                      )}
                    </Table.Td>
                  );
                })}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}
