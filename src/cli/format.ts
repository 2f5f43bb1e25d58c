/** Small text helpers for the command's human output: sizes, tables, colour. */
import { styleText } from "node:util";

type Style = Parameters<typeof styleText>[0];

/**
 * Colour only for a TTY, unless NO_COLOR is set to a non-empty value (the
 * no-color.org convention: an empty NO_COLOR does not disable colour).
 */
export function colorEnabled(stream: NodeJS.WriteStream): boolean {
  return Boolean(stream.isTTY) && (process.env["NO_COLOR"] ?? "") === "";
}

export function paint(style: Style, text: string, enabled: boolean): string {
  return enabled ? styleText(style, text) : text;
}

/** "2,097,152 B (2 MiB)". */
export function formatBytes(bytes: number): string {
  const units = ["KiB", "MiB", "GiB"];
  let scaled = bytes;
  let unit = "";
  for (const next of units) {
    if (scaled < 1024) break;
    scaled /= 1024;
    unit = next;
  }
  const exact = `${bytes.toLocaleString("en-US")} B`;
  if (unit === "") return exact;
  const rounded = Number.isInteger(scaled) ? String(scaled) : scaled.toFixed(1);
  return `${exact} (${rounded} ${unit})`;
}

/** Two aligned columns. */
export function table(rows: ReadonlyArray<readonly [string, string]>): string {
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join("\n");
}
