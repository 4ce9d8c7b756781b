import { Anchor, Center, Loader, Paper, Stack, Text, Title } from "@mantine/core";
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { Link, useNavigate } from "react-router";
import { ErrorAlert } from "../../api/ErrorAlert";
import { fetchProfile, profileKey } from "../../api/profile";
import { completeSignIn, rememberSession, SignInError, type SignedIn } from "../../session/oidc";
import { setToken } from "../../session/session";
import { safeNext } from "./SignInPage";

// One completion per callback URL: the issuer's code and the flow's state are good once, and
// React may mount the page twice.
const completions = new Map<string, Promise<SignedIn>>();

function complete(url: string): Promise<SignedIn> {
  let p = completions.get(url);
  if (!p) {
    p = completeSignIn(url);
    completions.set(url, p);
  }
  return p;
}

/**
 * SignInCallbackPage is where the OpenID Connect issuer sends the browser back: it exchanges
 * the code for tokens, checks the bearer with GET /api/v2/profile (which registers a
 * first-time user), keeps it and goes where the sign-in started. The issuer's error, or the
 * gateway's refusal, is shown with the way back to the sign-in page.
 */
export default function SignInCallbackPage() {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [error, setError] = useState<unknown>(null);
  const next = error instanceof SignInError ? safeNext(error.next) : "/";
  const back = next === "/" ? "/signin" : `/signin?next=${encodeURIComponent(next)}`;

  useEffect(() => {
    let live = true;
    const url = window.location.href;
    (async () => {
      const s = await complete(url);
      const profile = await fetchProfile(s.bearer);
      if (!live) return;
      queryClient.setQueryData(profileKey(s.bearer), profile);
      rememberSession(s);
      setToken(s.bearer);
      navigate(safeNext(s.next), { replace: true });
    })().catch((e: unknown) => {
      if (live) setError(e);
    });
    return () => {
      live = false;
    };
  }, [navigate, queryClient]);

  return (
    <Center mih="100vh" p="md">
      <Paper component="main" withBorder shadow="sm" p="xl" w="100%" maw={440}>
        <Stack>
          <Title order={1} size="h2">
            Sign in to Baton
          </Title>
          {error === null ? (
            <Center>
              <Loader aria-label="Signing in" />
            </Center>
          ) : (
            <>
              <ErrorAlert error={error} title="Sign-in failed" />
              <Text size="sm">
                <Anchor component={Link} to={back} underline="always">
                  Back to sign in
                </Anchor>
              </Text>
            </>
          )}
        </Stack>
      </Paper>
    </Center>
  );
}
