import { Alert, List, Loader, Text } from "@mantine/core";
import { useDebouncedValue } from "@mantine/hooks";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { api, call } from "../../api/client";
import { ErrorAlert } from "../../api/ErrorAlert";
import { formatIn } from "./zone";

/**
 * NextFires shows, as the expression and the zone are typed, the next five fire times the
 * API computes for them (GET /schedule/validate-cron, asked once typing pauses), written in
 * the zone; an expression the API refuses shows its message.
 */
export function NextFires({ team, cron, zone }: { team: string; cron: string; zone: string }) {
  const [asked] = useDebouncedValue({ cron: cron.trim(), zone }, 350);
  const check = useQuery({
    queryKey: ["schedules", team, "validate-cron", asked.cron, asked.zone],
    enabled: asked.cron !== "" && asked.zone !== "",
    queryFn: () =>
      call(
        api.GET("/api/v2/team/{team}/schedule/validate-cron", {
          params: { path: { team }, query: { cron: asked.cron, timezone: asked.zone } },
        }),
      ),
    placeholderData: keepPreviousData,
    staleTime: 60_000,
  });
  const typing = asked.cron !== cron.trim() || asked.zone !== zone;
  return (
    <section aria-label="Next fire times" aria-live="polite" aria-busy={typing || check.isFetching}>
      <Text size="sm" fw={500} mb={4}>
        Next fire times {asked.zone ? `in ${asked.zone}` : ""} {(typing || check.isFetching) && <Loader size={12} aria-hidden />}
      </Text>
      {asked.cron === "" ? (
        <Text size="sm" c="dimmed">
          Type an expression to see when it fires.
        </Text>
      ) : check.error ? (
        <ErrorAlert error={check.error} title="Not checked" />
      ) : check.data && !check.data.valid ? (
        <Alert color="orange" title="Not a valid schedule" data-testid="cron-invalid" styles={{ title: { color: "var(--mantine-color-text)" } }}>
          {check.data.message}
        </Alert>
      ) : check.data ? (
        <List size="sm" data-testid="next-fires">
          {(check.data.nextDates ?? []).map((d) => (
            <List.Item key={d}>{formatIn(d, asked.zone)}</List.Item>
          ))}
        </List>
      ) : (
        <Loader size="sm" aria-label="Checking the expression" />
      )}
    </section>
  );
}
