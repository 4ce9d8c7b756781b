import { ActionIcon, Tooltip } from "@mantine/core";
import { useHotkeys } from "@mantine/hooks";
import { IconSearch } from "@tabler/icons-react";
import { Suspense, lazy, useCallback, useEffect, useState } from "react";

/** The palette's shortcuts, in Mantine's notation: Ctrl+K (⌘K on a Mac), or /. */
export const SHORTCUTS = ["mod + K", "/"];

const load = () => import("./CommandPaletteDialog");
const CommandPaletteDialog = lazy(load);

/**
 * CommandPalette is the keyboard's way around (Ctrl+K or ⌘K, or /): its button and shortcuts
 * are part of the shell, the palette (Mantine's Spotlight and its actions) is its own chunk,
 * fetched once the page is idle and shown at the first use, so the first load neither
 * carries nor renders it.
 */
export function CommandPalette() {
  const [opens, setOpens] = useState(0);
  const open = useCallback(() => setOpens((n) => n + 1), []);
  // Until the palette is shown, its shortcuts are these; then the palette's own too (both open).
  useHotkeys(SHORTCUTS.map((k) => [k, open]));
  useEffect(() => {
    const preload = () => void load().catch(() => undefined); // A failure shows at the first use.
    if (typeof window.requestIdleCallback === "function") {
      const id = window.requestIdleCallback(preload, { timeout: 5_000 });
      return () => window.cancelIdleCallback(id);
    }
    const id = window.setTimeout(preload, 2_000);
    return () => window.clearTimeout(id);
  }, []);
  return (
    <>
      <Tooltip label="Go to… (Ctrl+K)">
        <ActionIcon variant="subtle" size="lg" aria-label="Go to… (Ctrl+K)" onClick={open}>
          <IconSearch size={20} aria-hidden />
        </ActionIcon>
      </Tooltip>
      {opens > 0 && (
        <Suspense fallback={null}>
          <CommandPaletteDialog opens={opens} />
        </Suspense>
      )}
    </>
  );
}
