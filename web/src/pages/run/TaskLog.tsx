// A task run's log, followed while the task runs (GET /taskrun/{id}/log?follow=true): the
// newest lines kept (a capped view; the whole log is a download), scrolled to the end as
// lines arrive unless the reader scrolled up.
import { Alert, Box, Button, Group, Text } from "@mantine/core";
import { IconArrowDown, IconDownload } from "@tabler/icons-react";
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";
import { ErrorAlert, notifyError } from "../../api/ErrorAlert";
import { asApiError, fromResponse } from "../../api/errors";
import { follow } from "../../api/stream";
import { getToken } from "../../session/session";

/** MAX_LINES is how many of the newest lines the view keeps. */
export const MAX_LINES = 5000;

const logPath = (id: string) => `/api/v2/taskrun/${encodeURIComponent(id)}/log`;

export interface TaskLogProps {
  taskRunId: string;
  taskName: string;
  /** started: the task has started (a task that never ran has no log to follow). */
  started: boolean;
  /** over: the task has ended; a stream cut short is followed again only while it runs. */
  over: boolean;
}

export function TaskLog({ taskRunId, taskName, started, over }: TaskLogProps) {
  const [lines, setLines] = useState<string[]>([]);
  const [total, setTotal] = useState(0);
  const [state, setState] = useState<"idle" | "following" | "done" | "cut">("idle");
  const [error, setError] = useState<unknown>(null);
  const [attempt, setAttempt] = useState(0);
  const overRef = useRef(over);
  overRef.current = over;

  useEffect(() => {
    if (!started) return;
    const ac = new AbortController();
    let pending: string[] = [];
    let timer: ReturnType<typeof setTimeout> | undefined;
    const flush = () => {
      timer = undefined;
      const add = pending;
      pending = [];
      setTotal((n) => n + add.length);
      setLines((l) => {
        const next = l.concat(add);
        return next.length > MAX_LINES ? next.slice(next.length - MAX_LINES) : next;
      });
    };
    setLines([]);
    setTotal(0);
    setError(null);
    setState("following");
    follow(
      `${logPath(taskRunId)}?follow=true`,
      (line) => {
        pending.push(line);
        timer ??= setTimeout(flush, 50);
      },
      ac.signal,
    )
      .then(() => {
        if (ac.signal.aborted) return;
        if (timer) clearTimeout(timer);
        flush();
        setState("done");
      })
      .catch((e: unknown) => {
        if (ac.signal.aborted) return;
        if (timer) clearTimeout(timer);
        flush();
        setError(e);
        setState("cut");
      });
    return () => {
      ac.abort();
      if (timer) clearTimeout(timer);
    };
  }, [taskRunId, started, attempt]);

  // A stream cut short while the task runs is followed again (from the start: the log is
  // read whole again), after a second.
  useEffect(() => {
    if (state !== "cut" || overRef.current) return;
    const t = setTimeout(() => setAttempt((a) => a + 1), 1000);
    return () => clearTimeout(t);
  }, [state]);

  const viewport = useRef<HTMLPreElement>(null);
  const [stuck, setStuck] = useState(true);
  // Where the view last scrolled itself: a scroll event at or below it is its own (lines
  // may have arrived since, so it is no longer at the end), not the reader scrolling up.
  const scrolledTo = useRef(0);
  const onScroll = () => {
    const v = viewport.current;
    if (!v) return;
    const atEnd = v.scrollTop + v.clientHeight >= v.scrollHeight - 24;
    if (!atEnd && v.scrollTop >= scrolledTo.current - 1) return;
    setStuck(atEnd);
  };
  useLayoutEffect(() => {
    const v = viewport.current;
    if (v && stuck) {
      v.scrollTop = v.scrollHeight;
      scrolledTo.current = v.scrollTop;
    }
  }, [lines, stuck]);
  const toEnd = () => {
    const v = viewport.current;
    if (v) {
      v.scrollTop = v.scrollHeight;
      scrolledTo.current = v.scrollTop;
    }
    setStuck(true);
  };

  const download = useCallback(async () => {
    try {
      const headers = new Headers();
      const token = getToken();
      if (token) headers.set("Authorization", `Bearer ${token}`);
      const r = await fetch(logPath(taskRunId), { headers });
      if (!r.ok) {
        const text = await r.text();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // Not JSON.
        }
        throw fromResponse(r, body);
      }
      const url = URL.createObjectURL(await r.blob());
      const a = document.createElement("a");
      a.href = url;
      a.download = `${taskName}-${taskRunId}.log`;
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (e) {
      notifyError(asApiError(e), "The log could not be downloaded");
    }
  }, [taskRunId, taskName]);

  if (!started) return <Text c="dimmed">The task has not started: it has no log yet.</Text>;
  return (
    <Box>
      <Group justify="space-between" mb={4}>
        <Text size="xs" c="dimmed" aria-live="polite">
          {state === "following" ? "Following the log as it is written" : state === "done" ? "The whole log" : state === "cut" ? "The log stream was cut" : ""}
          {total > lines.length ? ` (the last ${lines.length.toLocaleString()} of ${total.toLocaleString()} lines; download it for the rest)` : ""}
        </Text>
        <Group gap="xs">
          {!stuck && (
            <Button size="compact-xs" variant="light" leftSection={<IconArrowDown size={14} aria-hidden />} onClick={toEnd}>
              Latest lines
            </Button>
          )}
          <Button size="compact-xs" variant="default" leftSection={<IconDownload size={14} aria-hidden />} onClick={() => void download()}>
            Download log
          </Button>
        </Group>
      </Group>
      {state === "cut" && error !== null && (over ? <ErrorAlert error={error} title="The log could not be read" /> : null)}
      {state !== "following" && lines.length === 0 && !error ? (
        <Text c="dimmed" size="sm">
          The log is empty.
        </Text>
      ) : (
        <Box
          component="pre"
          ref={viewport}
          onScroll={onScroll}
          tabIndex={0}
          role="log"
          aria-live="off"
          aria-label={`Log of task ${taskName}`}
          m={0}
          p="xs"
          mah={420}
          mih={120}
          style={{
            overflow: "auto",
            fontFamily: "var(--mantine-font-family-monospace)",
            fontSize: 12,
            lineHeight: 1.45,
            whiteSpace: "pre-wrap",
            wordBreak: "break-all",
            background: "var(--mantine-color-default-hover)",
            borderRadius: 6,
          }}
        >
          {lines.join("\n")}
        </Box>
      )}
      {state === "cut" && !over && (
        <Alert color="yellow" variant="light" mt="xs" title="Reconnecting">
          The log stream was cut short; following it again.
        </Alert>
      )}
    </Box>
  );
}
