import { Component, type ReactNode } from "react";
import { Alert, Button, Stack, Text } from "@mantine/core";
import { ApiError } from "../api/errors";
import { ErrorAlert } from "../api/ErrorAlert";

interface State {
  error: unknown;
}

/**
 * ErrorBoundary shows what made a page fail instead of a blank screen: an API error in the
 * contract's words, a chunk that failed to load (a new version was deployed) with a reload.
 */
export class ErrorBoundary extends Component<{ children: ReactNode }, State> {
  state: State = { error: null };

  static getDerivedStateFromError(error: unknown): State {
    return { error };
  }

  render() {
    const { error } = this.state;
    if (error === null) return this.props.children;
    if (error instanceof ApiError) return <ErrorAlert error={error} />;
    return (
      <Alert color="red" title="This page failed" role="alert">
        <Stack gap="xs">
          <Text size="sm">{error instanceof Error ? error.message : String(error)}</Text>
          <Button size="xs" variant="light" onClick={() => window.location.reload()} w="fit-content">
            Reload
          </Button>
        </Stack>
      </Alert>
    );
  }
}
