// The run's controls, each offered when the run's phase allows it, and enabled when the
// principal's grants allow it (the API decides in the end, and its refusal is shown in
// its words): cancel while it has not completed; retry and retry from failure once it has
// completed without succeeding; run again with changed params at any time.
import { Button, Group, Modal, Stack, Text, Tooltip } from "@mantine/core";
import { IconArrowBackUp, IconPlayerStop, IconRepeat } from "@tabler/icons-react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import { useNavigate } from "react-router";
import { api, call } from "../../api/client";
import { ErrorAlert, notifyError } from "../../api/ErrorAlert";
import { useProfile } from "../../api/profile";
import { may } from "./permissions";
import { runKey } from "./queries";
import { RunAgain, type Param } from "./RunAgain";
import { ended, type Run } from "./status";

function Allowed({ allowed, why, children }: { allowed: boolean; why: string; children: ReactNode }) {
  if (allowed) return children;
  return (
    <Tooltip label={why}>
      <span>{children}</span>
    </Tooltip>
  );
}

export interface RunControlsProps {
  team: string;
  run: Run;
  /** params are the workflow version's, for the run-again form (undefined while unknown). */
  params: Param[] | undefined;
}

export function RunControls({ team, run, params }: RunControlsProps) {
  const profile = useProfile();
  const client = useQueryClient();
  const navigate = useNavigate();
  const [confirmCancel, setConfirmCancel] = useState(false);
  const [again, setAgain] = useState(false);
  const workflow = run.workflowRef ?? "";
  const canAct = may(profile.data, team, workflow, "workflowrun", "action");
  const canSubmit = may(profile.data, team, workflow, "workflowrun", "write");
  const path = { team, workflowRunId: run.id ?? "" };

  const cancel = useMutation({
    mutationFn: () => call(api.DELETE("/api/v2/team/{team}/workflowrun/{workflowRunId}/cancel", { params: { path } })),
    onSuccess: (r) => {
      setConfirmCancel(false);
      // The cancel answers the run without its task runs: keep the ones known until the watch sends them.
      client.setQueryData<Run>(runKey(team, run.id ?? ""), (old) => ({ ...old, ...r, tasks: r.tasks ?? old?.tasks }));
      void client.invalidateQueries({ queryKey: runKey(team, run.id ?? "") });
    },
  });
  const retry = useMutation({
    mutationFn: (fromFailure: boolean) =>
      call(api.PUT("/api/v2/team/{team}/workflowrun/{workflowRunId}/retry", { params: { path }, body: { fromFailure } })),
    onSuccess: (r) => void navigate(`/teams/${encodeURIComponent(team)}/runs/${encodeURIComponent(r.id ?? "")}`),
    onError: (e) => notifyError(e, "The run could not be retried"),
  });

  const noAction = "Your grants do not allow acting on this team's runs (workflowrun/action).";
  const isEnded = ended(run);
  const retriable = isEnded && run.status !== "succeeded";
  return (
    <Group gap="xs">
      {!isEnded && (
        <Allowed allowed={canAct} why={noAction}>
          <Button color="red" variant="light" leftSection={<IconPlayerStop size={16} aria-hidden />} disabled={!canAct} onClick={() => setConfirmCancel(true)}>
            Cancel run
          </Button>
        </Allowed>
      )}
      {retriable && (
        <>
          <Allowed allowed={canAct} why={noAction}>
            <Button
              variant="light"
              leftSection={<IconArrowBackUp size={16} aria-hidden />}
              disabled={!canAct}
              loading={retry.isPending && retry.variables === true}
              onClick={() => retry.mutate(true)}
            >
              Retry from failure
            </Button>
          </Allowed>
          <Allowed allowed={canAct} why={noAction}>
            <Button
              variant="default"
              disabled={!canAct}
              loading={retry.isPending && retry.variables === false}
              onClick={() => retry.mutate(false)}
            >
              Retry all tasks
            </Button>
          </Allowed>
        </>
      )}
      <Allowed allowed={canSubmit} why="Your grants do not allow submitting this workflow's runs (workflowrun/write).">
        <Button
          variant="default"
          leftSection={<IconRepeat size={16} aria-hidden />}
          disabled={!canSubmit || params === undefined}
          onClick={() => setAgain(true)}
        >
          Run again…
        </Button>
      </Allowed>
      <Modal closeButtonProps={{ "aria-label": "Close" }} opened={confirmCancel} onClose={() => setConfirmCancel(false)} title="Cancel this run?">
        <Stack>
          <Text size="sm">
            Its running tasks are stopped, the ones not started are skipped, its open actions are cancelled, and so are the
            child runs below it.
          </Text>
          {cancel.error && <ErrorAlert error={cancel.error} title="The run could not be cancelled" />}
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setConfirmCancel(false)}>
              Keep it running
            </Button>
            <Button color="red" loading={cancel.isPending} onClick={() => cancel.mutate()}>
              Cancel the run
            </Button>
          </Group>
        </Stack>
      </Modal>
      {again && params && <RunAgain team={team} run={run} params={params} opened={again} onClose={() => setAgain(false)} />}
    </Group>
  );
}
