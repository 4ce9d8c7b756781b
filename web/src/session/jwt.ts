// What the UI reads of a JWT bearer (an OpenID Connect sign-in's token): its expiry, so that
// the session ends when the token does. Nothing here verifies anything; the gateway does.

/** jwtClaims decodes a compact JWT's payload, or answers null for anything else (Baton's opaque tokens). */
export function jwtClaims(token: string): Record<string, unknown> | null {
  const parts = token.split(".");
  const payload = parts[1];
  if (parts.length !== 3 || !payload) return null;
  try {
    const b64 = payload.replace(/-/g, "+").replace(/_/g, "/");
    const padded = b64 + "=".repeat((4 - (b64.length % 4)) % 4);
    const bytes = Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
    const claims: unknown = JSON.parse(new TextDecoder().decode(bytes));
    return typeof claims === "object" && claims !== null && !Array.isArray(claims) ? (claims as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** jwtExpiry is a JWT's exp in milliseconds since the epoch, or null when it has none or is no JWT. */
export function jwtExpiry(token: string): number | null {
  const exp = jwtClaims(token)?.exp;
  return typeof exp === "number" && Number.isFinite(exp) ? exp * 1000 : null;
}
