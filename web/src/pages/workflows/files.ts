// Files in and out of the browser: downloads of exports, and reading an imported file.

/** download saves text as a file named name. */
export function download(name: string, text: string, type: string) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  // The click has started the download; the URL can go once it has been read.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** readFile answers a chosen file's text. */
export function readFile(f: File): Promise<string> {
  return f.text();
}
