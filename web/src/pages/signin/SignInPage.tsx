import { Anchor, Button, Center, Paper, PasswordInput, Stack, Text, Title } from "@mantine/core";
import { useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Navigate, useNavigate, useSearchParams } from "react-router";
import { ErrorAlert } from "../../api/ErrorAlert";
import { fetchProfile, profileKey } from "../../api/profile";
import { sessionExpired, setToken, useToken } from "../../session/session";
import { OIDCSignInButton } from "./OIDCSignIn";

/** safeNext keeps a return path inside this UI: a path, never another origin. */
export function safeNext(next: string | null): string {
  if (!next || !next.startsWith("/") || next.startsWith("//") || next.startsWith("/\\")) return "/";
  return next;
}

/**
 * SignInPage asks for a token of this server (the admin token it printed at start, or a
 * user's or team's token), checks it with GET /api/v2/profile and keeps it in this browser.
 */
export default function SignInPage() {
  const token = useToken();
  const [params] = useSearchParams();
  const next = safeNext(params.get("next"));
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [value, setValue] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  if (token !== null && !busy) return <Navigate to={next} replace />;

  async function submit(e: FormEvent) {
    e.preventDefault();
    const t = value.trim();
    if (t === "") return;
    setBusy(true);
    setError(null);
    try {
      const profile = await fetchProfile(t);
      queryClient.setQueryData(profileKey(t), profile);
      setToken(t);
      navigate(next, { replace: true });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Center mih="100vh" p="md">
      <Paper component="main" withBorder shadow="sm" p="xl" w="100%" maw={440}>
        <form onSubmit={submit} noValidate>
          <Stack>
            <Title order={1} size="h2">
              Sign in to Baton
            </Title>
            {sessionExpired() && (
              <Text role="status" size="sm" fw={500}>
                Your sign-in has expired: sign in again to go back to where you were.
              </Text>
            )}
            <OIDCSignInButton next={next} />
            <Text size="sm">
              Paste a token of this server: the admin token <code>baton server</code> printed when it started, or a
              user&apos;s or team&apos;s token (<code>baton token create</code>).
            </Text>
            <PasswordInput
              label="Token"
              name="token"
              autoComplete="off"
              required
              value={value}
              onChange={(e) => setValue(e.currentTarget.value)}
              data-autofocus
            />
            {error !== null && <ErrorAlert error={error} title="Sign-in failed" />}
            <Button type="submit" loading={busy} disabled={value.trim() === ""}>
              Sign in
            </Button>
            <Text size="xs" c="dimmed">
              The token is kept in this browser&apos;s local storage until you sign out. Anyone using this browser
              profile can use it; sign out on shared machines.
            </Text>
            <Text size="xs" c="dimmed">
              The API is described at{" "}
              <Anchor href="/api/v2/docs" size="xs" underline="always">
                /api/v2/docs
              </Anchor>
              .
            </Text>
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}
