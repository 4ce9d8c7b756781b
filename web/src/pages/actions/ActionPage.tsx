import {
  Alert,
  Anchor,
  Button,
  Card,
  Center,
  Code,
  Group,
  Loader,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Textarea,
  Title,
} from "@mantine/core";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent, type ReactNode } from "react";
import { Link, useParams } from "react-router";
import { api, call, type Schemas } from "../../api/client";
import { ErrorAlert } from "../../api/ErrorAlert";
import { asApiError } from "../../api/errors";
import { ActionStatusBadge, actionTypeLabel, formatDate, notify } from "./common";
import { asParams, checkForm, fieldErrorsOf, type FormValue } from "./formRules";
import { initialValues, ParamFields } from "./ParamFields";

/**
 * ActionPage is one action: the run and task it belongs to, what it asks, who may decide,
 * the decisions so far; while it waits, approve or reject it with a comment, or complete a
 * manual task's form (checked as the API checks it, the API's field errors on the fields).
 */
export default function ActionPage() {
  const { team = "", actionId = "" } = useParams();
  const action = useQuery({
    queryKey: ["actions", team, "one", actionId],
    queryFn: () => call(api.GET("/api/v2/team/{team}/action/{actionId}", { params: { path: { team, actionId } } })),
  });
  const base = `/teams/${encodeURIComponent(team)}`;
  const a = action.data;
  return (
    <Stack>
      <Anchor component={Link} to={`${base}/actions`} size="sm">
        All actions
      </Anchor>
      <Group gap="sm">
        <Title order={1}>{a ? `${actionTypeLabel(a.type)}: ${a.taskName || a.id}` : "Action"}</Title>
        {a && <ActionStatusBadge status={a.status} />}
      </Group>
      {action.isPending && (
        <Center p="xl">
          <Loader aria-label="Loading" />
        </Center>
      )}
      {action.error && <ErrorAlert error={action.error} title="The action could not be read" />}
      {a && (
        <>
          <Card withBorder>
            <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} spacing="sm">
              <Fact label="Workflow">{a.workflowName || a.workflowRef}</Fact>
              <Fact label="Run">
                <Anchor
                  component={Link}
                  to={`${base}/runs/${encodeURIComponent(a.workflowRunRef ?? "")}?task=${encodeURIComponent(a.taskName ?? "")}`}
                >
                  {a.workflowRunRef}
                </Anchor>
              </Fact>
              <Fact label="Task">{a.taskName}</Fact>
              <Fact label="Who may decide">
                {a.approverGroupRef ? `Members of the approver group ${a.approverGroupRef}` : "Any team member allowed to act on actions"}
              </Fact>
              {a.type === "approval" && (
                <Fact label="Approvals">
                  {a.numberOfApprovals ?? 0} of {a.numberOfApprovers ?? 1} needed
                </Fact>
              )}
              <Fact label="Created">{formatDate(a.creationDate)}</Fact>
              {a.decisionDate && <Fact label="Decided">{formatDate(a.decisionDate)}</Fact>}
            </SimpleGrid>
          </Card>
          {a.instructions && (
            <Card withBorder>
              <Title order={2} size="h4" mb="xs">
                Instructions
              </Title>
              <Text style={{ whiteSpace: "pre-wrap" }}>{a.instructions}</Text>
            </Card>
          )}
          {a.statusMessage && (
            <Alert color="gray" title="Closed without a decision">
              {a.statusMessage}
            </Alert>
          )}
          {a.status === "submitted" && <Decide team={team} action={a} />}
          {a.type === "manual" && (a.results?.length ?? 0) > 0 && <Results results={a.results ?? []} />}
          <Decisions actioners={a.actioners ?? []} />
        </>
      )}
    </Stack>
  );
}

type Action = Schemas["Action"];

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed" fw={600} tt="uppercase">
        {label}
      </Text>
      <Text component="div">{children}</Text>
    </div>
  );
}

function Decide({ team, action }: { team: string; action: Action }) {
  const qc = useQueryClient();
  const form = action.type === "manual" ? asParams(action.params) : [];
  const [values, setValues] = useState<Record<string, FormValue>>(() => initialValues(form));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [comments, setComments] = useState("");
  const decide = useMutation({
    mutationFn: (d: { approved: boolean; params?: Record<string, unknown> }) =>
      call(
        api.PUT("/api/v2/team/{team}/action", {
          params: { path: { team } },
          body: [
            {
              id: action.id ?? "",
              approved: d.approved,
              ...(comments.trim() ? { comments: comments.trim() } : {}),
              ...(d.params ? { params: Object.entries(d.params).map(([name, value]) => ({ name, value })) } : {}),
            },
          ],
        }),
      ),
    onSuccess: (_, d) => {
      notify(d.approved ? "green" : "orange", d.approved ? (action.type === "manual" ? "Completed." : "Approved.") : "Rejected.");
      void qc.invalidateQueries({ queryKey: ["actions", team] });
    },
    onError: (e) => setErrors(fieldErrorsOf(asApiError(e).fieldErrors, form)),
  });

  const submit = (approved: boolean) => (ev?: FormEvent) => {
    ev?.preventDefault();
    if (!approved) {
      setErrors({});
      decide.mutate({ approved: false });
      return;
    }
    if (action.type !== "manual") {
      decide.mutate({ approved: true });
      return;
    }
    const checked = checkForm(form, values);
    setErrors(checked.errors);
    const first = Object.keys(checked.errors)[0];
    if (first) {
      document.querySelector<HTMLElement>(`[name="${CSS.escape(first)}"]`)?.focus();
      return;
    }
    decide.mutate({ approved: true, params: checked.send });
  };

  const manual = action.type === "manual";
  return (
    <Card withBorder component="form" onSubmit={submit(true)} noValidate aria-label={manual ? "Complete the task" : "Decide"}>
      <Stack>
        <Title order={2} size="h4">
          {manual ? "Complete the task" : "Your decision"}
        </Title>
        {manual && form.length > 0 && (
          <ParamFields
            form={form}
            values={values}
            errors={errors}
            disabled={decide.isPending}
            onChange={(name, v) => {
              setValues((s) => ({ ...s, [name]: v }));
              setErrors((s) => {
                if (!(name in s)) return s;
                const { [name]: _, ...rest } = s;
                return rest;
              });
            }}
          />
        )}
        <Textarea
          label="Comment"
          description="Kept with your decision and shown on the run."
          value={comments}
          onChange={(e) => setComments(e.currentTarget.value)}
          maxLength={4096}
          autosize
          minRows={2}
          disabled={decide.isPending}
        />
        {decide.error && Object.keys(errors).length === 0 && <ErrorAlert error={decide.error} title="Not recorded" />}
        {decide.error && Object.keys(errors).length > 0 && (
          <Text c="red" size="sm" role="alert">
            The API refused some values: {Object.keys(errors).map((n) => `${n} ${errors[n]}`).join("; ")}.
          </Text>
        )}
        <Group>
          <Button type="submit" loading={decide.isPending && decide.variables?.approved === true}>
            {manual ? "Complete" : "Approve"}
          </Button>
          <Button
            type="button"
            color="red"
            variant="light"
            onClick={submit(false)}
            loading={decide.isPending && decide.variables?.approved === false}
          >
            Reject
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}

function Results({ results }: { results: { name: string; value?: unknown }[] }) {
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="xs">
        Values given
      </Title>
      <Table aria-label="Values given">
        <Table.Tbody>
          {results.map((r) => (
            <Table.Tr key={r.name}>
              <Table.Th w={220}>{r.name}</Table.Th>
              <Table.Td>
                <Code>{typeof r.value === "string" ? r.value : JSON.stringify(r.value)}</Code>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Card>
  );
}

function Decisions({ actioners }: { actioners: NonNullable<Action["actioners"]> }) {
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="xs">
        Decisions
      </Title>
      {actioners.length === 0 ? (
        <Text c="dimmed">Nobody has decided yet.</Text>
      ) : (
        <Table aria-label="Decisions">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Who</Table.Th>
              <Table.Th>Decision</Table.Th>
              <Table.Th>Comment</Table.Th>
              <Table.Th>When</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {actioners.map((v, i) => (
              <Table.Tr key={`${v.approverId}-${i}`}>
                <Table.Td>{v.approverName || v.approverEmail || v.approverId}</Table.Td>
                <Table.Td>
                  <ActionStatusBadge status={v.approved ? "approved" : "rejected"} />
                </Table.Td>
                <Table.Td style={{ whiteSpace: "pre-wrap" }}>{v.comments || "—"}</Table.Td>
                <Table.Td>{formatDate(v.date)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Card>
  );
}
