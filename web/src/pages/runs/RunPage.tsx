import { Anchor, Center, Group, Loader, Stack, Text, Title } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import { Link, useParams } from "react-router";
import { api, call } from "../../api/client";
import { ErrorAlert } from "../../api/ErrorAlert";
import { StatusBadge } from "../../components/StatusBadge";

/** RunPage is the run page: the run's workflow and status, read from the API. */
export default function RunPage() {
  const { team = "", runId = "" } = useParams();
  const run = useQuery({
    queryKey: ["run", team, runId],
    queryFn: () =>
      call(
        api.GET("/api/v2/team/{team}/workflowrun/{workflowRunId}", {
          params: { path: { team, workflowRunId: runId }, query: { withTasks: false } },
        }),
      ),
  });
  return (
    <Stack>
      <Anchor component={Link} to={`/teams/${encodeURIComponent(team)}/runs`} size="sm">
        All runs
      </Anchor>
      <Title order={1}>Run {runId}</Title>
      {run.isPending && (
        <Center>
          <Loader aria-label="Loading" />
        </Center>
      )}
      {run.error && <ErrorAlert error={run.error} title="The run could not be read" />}
      {run.data && (
        <Group>
          <Text>{run.data.workflowDisplayName || run.data.workflowName || run.data.workflowRef}</Text>
          <StatusBadge status={run.data.status} />
        </Group>
      )}
    </Stack>
  );
}
