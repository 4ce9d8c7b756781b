import { Anchor, Button, Center, Group, Loader, Modal, Stack, Switch, Tabs, Text, Title } from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import { IconTrash } from "@tabler/icons-react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate, useParams, useSearchParams } from "react-router";
import { api, call, type Schemas } from "../../api/client";
import { ErrorAlert } from "../../api/ErrorAlert";
import { notify, TintBadge } from "../actions/common";
import { Backfill } from "./Backfill";
import { FireCalendar } from "./FireCalendar";
import { useToggleSchedule } from "./mutations";
import { ScheduleEditor } from "./ScheduleEditor";

const tabs = ["settings", "calendar", "backfill"] as const;

/**
 * SchedulePage is a new schedule (/schedules/new) or one schedule: its settings, a month of
 * its fires and backfilling a window, each a tab in the URL (?tab=calendar); enable or
 * disable it, delete it once confirmed.
 */
export default function SchedulePage() {
  const { team = "", scheduleId } = useParams();
  const base = `/teams/${encodeURIComponent(team)}/schedules`;
  if (!scheduleId) {
    return (
      <Stack>
        <Anchor component={Link} to={base} size="sm">
          All schedules
        </Anchor>
        <Title order={1}>New schedule</Title>
        <ScheduleEditor team={team} />
      </Stack>
    );
  }
  return <Existing team={team} scheduleId={scheduleId} base={base} />;
}

function Existing({ team, scheduleId, base }: { team: string; scheduleId: string; base: string }) {
  const [search, setSearch] = useSearchParams();
  const tab = tabs.find((t) => t === search.get("tab")) ?? "settings";
  const schedule = useQuery({
    queryKey: ["schedules", team, "one", scheduleId],
    queryFn: () => call(api.GET("/api/v2/team/{team}/schedule/{scheduleId}", { params: { path: { team, scheduleId } } })),
  });
  const toggle = useToggleSchedule(team);
  const s = schedule.data;
  const name = s ? s.name || s.workflowRef : "Schedule";
  return (
    <Stack>
      <Anchor component={Link} to={base} size="sm">
        All schedules
      </Anchor>
      <Group justify="space-between">
        <Group gap="sm">
          <Title order={1}>{name}</Title>
          {s?.triggerDisabled && (
            <TintBadge color="orange">the workflow's schedule trigger is off</TintBadge>
          )}
          {s?.status === "completed" && <TintBadge color="gray">completed</TintBadge>}
        </Group>
        {s && (
          <Group>
            <Switch
              label="Enabled"
              checked={s.status === "active"}
              disabled={s.status === "completed" || s.status === "archived" || toggle.isPending}
              onChange={(e) => toggle.mutate({ s, enabled: e.currentTarget.checked })}
            />
            <Delete team={team} s={s} base={base} />
          </Group>
        )}
      </Group>
      {schedule.isPending && (
        <Center p="xl">
          <Loader aria-label="Loading" />
        </Center>
      )}
      {schedule.error && <ErrorAlert error={schedule.error} title="The schedule could not be read" />}
      {s && (
        <Tabs
          value={tab}
          onChange={(v) => {
            const next = new URLSearchParams(search);
            if (!v || v === "settings") next.delete("tab");
            else next.set("tab", v);
            setSearch(next);
          }}
          keepMounted={false}
        >
          <Tabs.List>
            <Tabs.Tab value="settings">Settings</Tabs.Tab>
            <Tabs.Tab value="calendar">Calendar</Tabs.Tab>
            <Tabs.Tab value="backfill">Backfill</Tabs.Tab>
          </Tabs.List>
          <Tabs.Panel value="settings" pt="md">
            <ScheduleEditor key={`${s.id}`} team={team} schedule={s} />
          </Tabs.Panel>
          <Tabs.Panel value="calendar" pt="md">
            {s.status === "active" || s.status === "inactive" ? (
              <FireCalendar team={team} scheduleId={scheduleId} zone={s.timezone || "UTC"} />
            ) : (
              <Text c="dimmed">A {s.status} schedule fires no more.</Text>
            )}
          </Tabs.Panel>
          <Tabs.Panel value="backfill" pt="md">
            <Backfill team={team} scheduleId={scheduleId} workflow={s.workflowRef} zone={s.timezone || "UTC"} />
          </Tabs.Panel>
        </Tabs>
      )}
    </Stack>
  );
}

function Delete({ team, s, base }: { team: string; s: Schemas["WorkflowSchedule"]; base: string }) {
  const [opened, { open, close }] = useDisclosure(false);
  const qc = useQueryClient();
  const navigate = useNavigate();
  const del = useMutation({
    mutationFn: () => call(api.DELETE("/api/v2/team/{team}/schedule/{scheduleId}", { params: { path: { team, scheduleId: s.id ?? "" } } })),
    onSuccess: () => {
      notify("green", `${s.name || s.workflowRef} is deleted.`);
      void qc.invalidateQueries({ queryKey: ["schedules", team] });
      navigate(base);
    },
  });
  return (
    <>
      <Button color="red" variant="light" leftSection={<IconTrash size={16} aria-hidden />} onClick={open}>
        Delete
      </Button>
      <Modal opened={opened} onClose={close} title={`Delete ${s.name || s.workflowRef}?`} closeButtonProps={{ "aria-label": "Close" }}>
        <Stack>
          <Text size="sm">The schedule stops firing and is kept read-only, as archived. Its runs stay.</Text>
          {del.error && <ErrorAlert error={del.error} title="Not deleted" />}
          <Group justify="end">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button color="red" onClick={() => del.mutate()} loading={del.isPending}>
              Delete schedule
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
