import { createTheme } from "@mantine/core";

// Mantine's defaults, with a primary shade dark enough for text on white and a light shade
// for dark backgrounds, so that links and buttons keep a contrast of 4.5:1 in both themes.
export const theme = createTheme({
  primaryColor: "blue",
  primaryShade: { light: 8, dark: 4 },
  fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
  defaultRadius: "sm",
});
