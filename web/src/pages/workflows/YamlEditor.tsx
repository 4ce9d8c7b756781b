// The YAML view of the designer: CodeMirror 6 with YAML highlighting. Loaded lazily, with
// the designer's chunk, so that the first load of the UI does not carry it.
import { yaml } from "@codemirror/lang-yaml";
import { useComputedColorScheme } from "@mantine/core";
import CodeMirror, { EditorView } from "@uiw/react-codemirror";
import { useMemo } from "react";

const extensions = [yaml(), EditorView.lineWrapping];

export default function YamlEditor({
  value,
  onChange,
  label,
  readOnly = false,
}: {
  value: string;
  onChange?: (v: string) => void;
  label: string;
  readOnly?: boolean;
}) {
  const scheme = useComputedColorScheme("light");
  const ext = useMemo(() => [...extensions, EditorView.contentAttributes.of({ "aria-label": label })], [label]);
  return (
    <CodeMirror
      value={value}
      onChange={onChange}
      extensions={ext}
      theme={scheme}
      readOnly={readOnly}
      height="100%"
      style={{ height: "100%", fontSize: 13 }}
      aria-label={label}
      basicSetup={{ foldGutter: true, highlightActiveLine: !readOnly }}
      // The scroller takes the keyboard too, so a long document can be scrolled without the mouse.
      onCreateEditor={(view) => {
        view.scrollDOM.tabIndex = 0;
      }}
    />
  );
}
