import { Alert, Code, List, Text } from "@mantine/core";
import { notifications } from "@mantine/notifications";
import { IconAlertTriangle } from "@tabler/icons-react";
import { asApiError } from "./errors";

/**
 * ErrorAlert shows a failed call in the contract's words: the reason as the title, the
 * message, the field errors of a validation failure and the trace id for support.
 */
export function ErrorAlert({ error, title }: { error: unknown; title?: string }) {
  const e = asApiError(error);
  return (
    <Alert
      color="red"
      variant="light"
      icon={<IconAlertTriangle aria-hidden />}
      title={title ? `${title}: ${e.reason}` : e.reason}
      role="alert"
    >
      <Text size="sm">{e.message}</Text>
      {e.fieldErrors.length > 0 && (
        <List size="sm" mt="xs">
          {e.fieldErrors.map((f) => (
            <List.Item key={`${f.field}:${f.message}`}>
              <Code>{f.field}</Code> {f.message}
            </List.Item>
          ))}
        </List>
      )}
      {e.traceId && (
        <Text size="xs" c="dimmed" mt="xs">
          Trace {e.traceId}
        </Text>
      )}
    </Alert>
  );
}

/** notifyError shows a failed call as a notification, in the contract's words. */
export function notifyError(error: unknown, title?: string) {
  const e = asApiError(error);
  notifications.show({
    color: "red",
    title: title ? `${title}: ${e.reason}` : e.reason,
    message: e.message,
    autoClose: 10_000,
  });
}
