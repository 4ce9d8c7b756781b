// The signed-in token, kept in localStorage (the sign-in page says so) so that a reload or a
// second tab stays signed in; signing out removes it.
import { useSyncExternalStore } from "react";

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

function emit() {
  for (const l of listeners) l();
}

// Another tab signing in or out changes this one too.
window.addEventListener("storage", (e) => {
  if (e.key === KEY || e.key === null) {
    current = read();
    emit();
  }
});

export function getToken(): string | null {
  return current;
}

export function setToken(token: string) {
  current = token;
  try {
    window.localStorage.setItem(KEY, token);
  } catch {
    // Storage refused (private mode): the token lasts for this page only.
  }
  emit();
}

export function clearToken() {
  current = null;
  try {
    window.localStorage.removeItem(KEY);
  } catch {
    // Nothing stored.
  }
  emit();
}

function subscribe(l: () => void) {
  listeners.add(l);
  return () => listeners.delete(l);
}

/** useToken is the signed-in token, or null, re-rendering when it changes. */
export function useToken(): string | null {
  return useSyncExternalStore(subscribe, getToken, getToken);
}
