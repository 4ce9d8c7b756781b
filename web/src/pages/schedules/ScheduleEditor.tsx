import { Button, Card, Center, Group, Loader, SegmentedControl, Select, SimpleGrid, Stack, Text, Textarea, TextInput, Title } from "@mantine/core";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useMemo, useState, type FormEvent } from "react";
import { useNavigate } from "react-router";
import { notify } from "../actions/common";
import { api, call, type Schemas } from "../../api/client";
import { ErrorAlert } from "../../api/ErrorAlert";
import { asParams, checkForm, paramName, type FormValue } from "../actions/formRules";
import { initialValues, ParamFields } from "../actions/ParamFields";
import { CronBuilder } from "./CronBuilder";
import { NextFires } from "./NextFires";
import { writable } from "./mutations";
import { formatIn, localZone, parseLocal, toLocalInput, zones } from "./zone";

type Schedule = Schemas["WorkflowSchedule"];

const overlapOptions = [
  { value: "allow", label: "Start a run anyway" },
  { value: "skip", label: "Skip the fire" },
  { value: "bufferOne", label: "Keep one fire for when it ends" },
  { value: "cancelOther", label: "Cancel the previous run" },
];

/**
 * ScheduleEditor creates a schedule (no `schedule`) or edits one: the workflow, when it
 * fires (a cron from the builder, or once at a date), the zone, the workflow's params, and
 * what a fire does while the previous run still runs.
 */
export function ScheduleEditor({ team, schedule }: { team: string; schedule?: Schedule }) {
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [name, setName] = useState(schedule?.name ?? "");
  const [description, setDescription] = useState(schedule?.description ?? "");
  const [workflow, setWorkflow] = useState(schedule?.workflowRef ?? "");
  const [type, setType] = useState<"cron" | "advancedCron" | "runOnce">(schedule?.type ?? "cron");
  const [cron, setCron] = useState(schedule?.cronSchedule ?? "0 9 * * MON-FRI");
  const [zone, setZone] = useState(schedule?.timezone || localZone());
  const [once, setOnce] = useState(() =>
    schedule?.dateSchedule ? toLocalInput(new Date(schedule.dateSchedule).getTime(), schedule.timezone || "UTC") : "",
  );
  const [overlap, setOverlap] = useState<string>(schedule?.overlapPolicy ?? "allow");
  const [values, setValues] = useState<Record<string, FormValue> | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const zoneList = useMemo(() => zones(), []);

  const workflows = useQuery({
    queryKey: ["workflows", team, "names"],
    queryFn: () => call(api.GET("/api/v2/team/{team}/workflow/query", { params: { path: { team }, query: { limit: 1000 } } })),
    staleTime: 60_000,
  });
  const wf = useQuery({
    queryKey: ["workflows", team, "one", workflow],
    enabled: workflow !== "",
    queryFn: () => call(api.GET("/api/v2/team/{team}/workflow/{name}", { params: { path: { team, name: workflow } } })),
  });
  const form = useMemo(() => asParams(wf.data?.params), [wf.data]);
  // The form's values: the schedule's own, over the workflow's defaults, until edited.
  const shown = useMemo(() => {
    if (values) return values;
    const v = initialValues(form);
    if (schedule && schedule.workflowRef === workflow) {
      for (const p of schedule.params ?? []) {
        const def = form.find((f) => paramName(f) === p.name);
        if (!def) continue;
        v[p.name] =
          def.type === "boolean"
            ? p.value === true || p.value === "true"
            : def.type === "multiselect" && Array.isArray(p.value)
              ? p.value.map(String)
              : typeof p.value === "string"
                ? p.value
                : JSON.stringify(p.value);
      }
    }
    return v;
  }, [values, form, schedule, workflow]);

  const save = useMutation({
    mutationFn: (body: Schedule) =>
      schedule?.id
        ? call(api.PUT("/api/v2/team/{team}/schedule", { params: { path: { team } }, body }))
        : call(api.POST("/api/v2/team/{team}/schedule", { params: { path: { team } }, body })),
    onSuccess: (s) => {
      notify("green", `${s.name || s.workflowRef} is saved.`);
      void qc.invalidateQueries({ queryKey: ["schedules", team] });
      if (!schedule?.id && s.id) navigate(`/teams/${encodeURIComponent(team)}/schedules/${encodeURIComponent(s.id)}`);
    },
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const errs: Record<string, string> = {};
    if (!workflow) errs.workflow = "Choose a workflow";
    if (type !== "runOnce" && cron.trim() === "") errs.cron = "Type a cron expression";
    const at = type === "runOnce" ? parseLocal(once, zone) : null;
    if (type === "runOnce" && at === null) errs.once = "Choose a date and time";
    const checked = checkForm(form, shown);
    setErrors({ ...errs, ...Object.fromEntries(Object.entries(checked.errors).map(([k, v]) => [`param:${k}`, v])) });
    if (Object.keys(errs).length > 0 || Object.keys(checked.errors).length > 0) return;
    const base: Schedule = schedule
      ? writable(schedule)
      : { workflowRef: workflow, timezone: zone, type, status: "active", overlapPolicy: "allow", misfirePolicy: "fireOnce" };
    save.mutate({
      ...base,
      name: name.trim() || undefined,
      description,
      workflowRef: workflow,
      type,
      timezone: zone,
      ...(type === "runOnce"
        ? { dateSchedule: new Date(at!).toISOString(), cronSchedule: undefined }
        : { cronSchedule: cron.trim(), dateSchedule: undefined }),
      overlapPolicy: overlap as Schedule["overlapPolicy"],
      params: Object.entries(checked.send).map(([n, value]) => ({ name: n, value })),
    });
  };

  const workflowOptions = (workflows.data?.content ?? []).map((w) => ({ value: w.name, label: w.displayName || w.name }));
  if (workflow && !workflowOptions.some((o) => o.value === workflow)) workflowOptions.unshift({ value: workflow, label: workflow });
  const paramErrors = Object.fromEntries(
    Object.entries(errors)
      .filter(([k]) => k.startsWith("param:"))
      .map(([k, v]) => [k.slice(6), v]),
  );

  return (
    <form onSubmit={submit} noValidate aria-label={schedule ? "Edit the schedule" : "New schedule"}>
      <Stack>
        <Card withBorder>
          <SimpleGrid cols={{ base: 1, md: 2 }}>
            <Select
              label="Workflow"
              placeholder="Choose a workflow"
              data={workflowOptions}
              value={workflow || null}
              onChange={(v) => {
                setWorkflow(v ?? "");
                setValues(null);
              }}
              searchable
              required
              error={errors.workflow}
              nothingFoundMessage={workflows.isPending ? "Loading…" : "No such workflow"}
            />
            <TextInput label="Name" placeholder={workflow || "The workflow's name"} value={name} onChange={(e) => setName(e.currentTarget.value)} maxLength={256} />
            <Textarea label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} autosize minRows={1} />
            <Select
              label="Time zone"
              description="The zone the schedule fires in"
              data={zoneList}
              value={zone}
              onChange={(v) => v && setZone(v)}
              searchable
              allowDeselect={false}
              limit={50}
              required
              comboboxProps={{ withinPortal: true }}
            />
          </SimpleGrid>
        </Card>
        <Card withBorder>
          <Stack>
            <Group justify="space-between">
              <Title order={2} size="h4">
                When
              </Title>
              <SegmentedControl
                aria-label="Schedule type"
                value={type === "runOnce" ? "runOnce" : "cron"}
                onChange={(v) => setType(v === "runOnce" ? "runOnce" : schedule?.type === "advancedCron" ? "advancedCron" : "cron")}
                data={[
                  { value: "cron", label: "Repeating (cron)" },
                  { value: "runOnce", label: "Once" },
                ]}
              />
            </Group>
            {type === "runOnce" ? (
              <Stack gap="xs">
                <TextInput
                  type="datetime-local"
                  label={`Date and time (${zone})`}
                  value={once}
                  onChange={(e) => setOnce(e.currentTarget.value)}
                  error={errors.once}
                  required
                  w={{ base: "100%", sm: 320 }}
                />
                {parseLocal(once, zone) !== null && (
                  <Text size="sm" c="dimmed">
                    Fires once, {formatIn(parseLocal(once, zone)!, zone)} ({new Date(parseLocal(once, zone)!).toISOString()})
                  </Text>
                )}
              </Stack>
            ) : (
              <SimpleGrid cols={{ base: 1, lg: 2 }}>
                <CronBuilder value={cron} onChange={setCron} error={errors.cron} />
                <NextFires team={team} cron={cron} zone={zone} />
              </SimpleGrid>
            )}
            <Select
              label="While the previous run still runs"
              data={overlapOptions}
              value={overlap}
              onChange={(v) => v && setOverlap(v)}
              allowDeselect={false}
              w={{ base: "100%", sm: 320 }}
            />
          </Stack>
        </Card>
        <Card withBorder>
          <Title order={2} size="h4" mb="xs">
            Parameters
          </Title>
          {!workflow ? (
            <Text c="dimmed" size="sm">
              Choose a workflow to give its parameters.
            </Text>
          ) : wf.isPending ? (
            <Center>
              <Loader size="sm" aria-label="Loading the workflow's parameters" />
            </Center>
          ) : wf.error ? (
            <ErrorAlert error={wf.error} title="The workflow could not be read" />
          ) : form.length === 0 ? (
            <Text c="dimmed" size="sm">
              This workflow takes no parameters.
            </Text>
          ) : (
            <ParamFields
              form={form}
              values={shown}
              errors={paramErrors}
              onChange={(n, v) => setValues({ ...shown, [n]: v })}
            />
          )}
        </Card>
        {save.error && <ErrorAlert error={save.error} title="Not saved" />}
        <Group>
          <Button type="submit" loading={save.isPending}>
            {schedule?.id ? "Save" : "Create schedule"}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
