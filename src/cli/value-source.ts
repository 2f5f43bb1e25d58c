/**
 * Where a `--var` or `--context` value comes from, so that a secret never
 * has to be written on the command line (every local user can read any
 * process's argv through ps or /proc/PID/cmdline):
 *
 *   NAME=VALUE   the value as typed (visible to ps: fine for non-secrets)
 *   NAME=@FILE   the contents of FILE, as strict UTF-8
 *   NAME=@-      this process's stdin, read to its end (at most once per
 *                command line: stdin cannot be read twice)
 *   NAME=@@text  the literal value "@text"
 *
 * and `--context-file FILE.json`: one JSON object whose values are strings.
 * Errors name the option, the key and the file; never a value or content.
 */
import { readFileSync } from "node:fs";
import { displayName } from "../errors.js";
import { readUtf8File } from "./read-text.js";
import { UsageError } from "./usage-error.js";

/** Reads `@-` sources from stdin, and refuses a second one. */
export class StdinSource {
  #claimedBy: string | undefined;
  readonly #read: () => Buffer;

  /** `read` reads stdin to its end (a parameter so that tests can feed it). */
  constructor(read: () => Buffer = () => readFileSync(0)) {
    this.#read = read;
  }

  /** Whether a value was read from stdin (then the step gets no stdin of ours). */
  get used(): boolean {
    return this.#claimedBy !== undefined;
  }

  /** The whole of stdin as strict UTF-8, for `label`. Throws UsageError on a second use. */
  take(label: string): string {
    if (this.#claimedBy !== undefined) {
      throw new UsageError(
        `${label}: stdin is already read for ${this.#claimedBy}; at most one value may come from @-`,
      );
    }
    this.#claimedBy = label;
    let bytes: Buffer;
    try {
      bytes = this.#read();
    } catch (error) {
      const code = (error as { code?: string }).code ?? "read failed";
      throw new UsageError(`${label}: cannot read stdin (${code})`);
    }
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw new UsageError(`${label}: stdin is not valid UTF-8`);
    }
  }
}

/** Resolves a typed value: `@FILE`, `@-`, `@@text` or the text itself. */
export function sourcedValue(raw: string, label: string, stdin: StdinSource): string {
  if (raw.startsWith("@@")) return raw.slice(1);
  if (!raw.startsWith("@")) return raw;
  const path = raw.slice(1);
  if (path === "") throw new UsageError(`${label}: "@" needs a file name (or "-" for stdin)`);
  if (path === "-") return stdin.take(label);
  return readUtf8File(path, label);
}

/**
 * The entries of a `--context-file`: a JSON object whose every value is a
 * string, in the file's key order. Throws UsageError naming the file and,
 * for a non-string value, the key and the JSON type found.
 */
export function readContextFile(path: string): Map<string, string> {
  const label = `--context-file ${path}`;
  const text = readUtf8File(path, "--context-file");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // JSON.parse's own message quotes the text around the error: never shown.
    throw new UsageError(`${label}: not valid JSON`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`${label}: expected a JSON object of string values`);
  }
  const entries = new Map<string, string>();
  for (const [key, value] of Object.entries(parsed)) {
    if (typeof value !== "string") {
      const type = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
      throw new UsageError(
        `${label}: the value of "${displayName(key)}" is a JSON ${type}; every value must be a string`,
      );
    }
    entries.set(key, value);
  }
  return entries;
}
