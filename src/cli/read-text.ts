/** Reads a file the command line names, as strict UTF-8 (what a child would receive, byte for byte). */
import { readFileSync } from "node:fs";
import { UsageError } from "./usage-error.js";

/** Throws UsageError (label, path and the reason; never content) when unreadable or not UTF-8. */
export function readUtf8File(path: string, label: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    const code = (error as { code?: string }).code ?? "read failed";
    throw new UsageError(`${label}: cannot read ${path} (${code})`);
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(`${label}: ${path} is not valid UTF-8`);
  }
}
