// A read-only side-by-side diff of two YAML texts (CodeMirror's merge view), loaded lazily.
import { yaml } from "@codemirror/lang-yaml";
import { defaultHighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { MergeView } from "@codemirror/merge";
import { EditorState } from "@codemirror/state";
import { oneDark } from "@codemirror/theme-one-dark";
import { EditorView, lineNumbers } from "@codemirror/view";
import { useComputedColorScheme } from "@mantine/core";
import { useEffect, useRef } from "react";

export default function YamlDiff({ from, to }: { from: string; to: string }) {
  const host = useRef<HTMLDivElement>(null);
  const scheme = useComputedColorScheme("light");
  useEffect(() => {
    if (!host.current) return;
    const side = (label: string) => [
      lineNumbers(),
      yaml(),
      syntaxHighlighting(defaultHighlightStyle),
      EditorState.readOnly.of(true),
      EditorView.editable.of(false),
      EditorView.lineWrapping,
      EditorView.contentAttributes.of({ "aria-label": label }),
      ...(scheme === "dark" ? [oneDark] : []),
    ];
    const view = new MergeView({
      a: { doc: from, extensions: side("Older version") },
      b: { doc: to, extensions: side("Newer version") },
      parent: host.current,
      collapseUnchanged: { margin: 3, minSize: 6 },
      gutter: true,
    });
    // The scrollers take the keyboard, so long documents scroll without the mouse.
    for (const el of [view.dom, view.a.scrollDOM, view.b.scrollDOM]) el.tabIndex = 0;
    return () => view.destroy();
  }, [from, to, scheme]);
  return <div ref={host} data-testid="yaml-diff" style={{ border: "1px solid var(--mantine-color-default-border)", borderRadius: 4 }} />;
}
