// The signed-in token, kept in localStorage (the sign-in page says so) so that a reload or a
// second tab stays signed in; signing out removes it. A token that is a JWT (an OpenID
// Connect sign-in's) ends the session when it expires, which sends the user to sign in again
// from the page they were on (RequireSignIn).
import { useSyncExternalStore } from "react";
import { jwtExpiry } from "./jwt";

const KEY = "baton.token";
const listeners = new Set<() => void>();

function read(): string | null {
  try {
    return window.localStorage.getItem(KEY);
  } catch {
    return null;
  }
}

let current: string | null = read();
let expired = false;
let expiryTimer: ReturnType<typeof setTimeout> | undefined;

function emit() {
  for (const l of listeners) l();
}

// setTimeout takes at most 2^31-1 ms; a longer wait is taken in steps.
const maxDelay = 2 ** 31 - 1;

/** watchExpiry ends the session when the current token's expiry passes; now, if it has. */
function watchExpiry() {
  clearTimeout(expiryTimer);
  expiryTimer = undefined;
  const exp = current === null ? null : jwtExpiry(current);
  if (exp === null) return;
  const left = exp - Date.now();
  if (left <= 0) {
    expireToken();
    return;
  }
  expiryTimer = setTimeout(watchExpiry, Math.min(left, maxDelay));
}

function expireToken() {
  end(true);
}

/** sessionExpired says whether the last session ended because its token expired. */
export function sessionExpired(): boolean {
  return expired;
}

// Another tab signing in or out changes this one too.
window.addEventListener("storage", (e) => {
  if (e.key === KEY || e.key === null) {
    current = read();
    watchExpiry();
    emit();
  }
});

export function getToken(): string | null {
  return current;
}

export function setToken(token: string) {
  current = token;
  expired = false;
  try {
    window.localStorage.setItem(KEY, token);
  } catch {
    // Storage refused (private mode): the token lasts for this page only.
  }
  watchExpiry();
  emit();
}

export function clearToken() {
  end(false);
}

function end(byExpiry: boolean) {
  current = null;
  expired = byExpiry;
  clearTimeout(expiryTimer);
  expiryTimer = undefined;
  try {
    window.localStorage.removeItem(KEY);
  } catch {
    // Nothing stored.
  }
  emit();
}

watchExpiry();

function subscribe(l: () => void) {
  listeners.add(l);
  return () => listeners.delete(l);
}

/** useToken is the signed-in token, or null, re-rendering when it changes. */
export function useToken(): string | null {
  return useSyncExternalStore(subscribe, getToken, getToken);
}
