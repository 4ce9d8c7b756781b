import { Button, Divider, Stack } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import { IconLogin2 } from "@tabler/icons-react";
import { useState } from "react";
import { ErrorAlert } from "../../api/ErrorAlert";
import { authConfigKey, fetchAuthConfig, issuerHost, startSignIn } from "../../session/oidc";

/**
 * OIDCSignInButton offers signing in with the server's OpenID Connect issuer when it has one
 * (GET /api/v2/auth/config), above the token form; nothing when it has none.
 */
export function OIDCSignInButton({ next }: { next: string }) {
  const config = useQuery({ queryKey: authConfigKey, queryFn: fetchAuthConfig, staleTime: Infinity, retry: 1 });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const oidc = config.data?.oidc;

  if (config.error) return <ErrorAlert error={config.error} title="How to sign in could not be read" />;
  if (!oidc) return null;

  async function go() {
    if (!oidc) return;
    setBusy(true);
    setError(null);
    try {
      // The page is left for the issuer's: busy stays on until then.
      await startSignIn(oidc, next);
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  }

  return (
    <Stack gap="sm">
      <Button variant="default" leftSection={<IconLogin2 size={18} aria-hidden />} loading={busy} onClick={go}>
        Sign in with {issuerHost(oidc)}
      </Button>
      {error !== null && <ErrorAlert error={error} title="Sign-in failed" />}
      <Divider label="or with a token" labelPosition="center" />
    </Stack>
  );
}
