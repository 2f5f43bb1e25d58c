/**
 * The script a bash step runs (preamble + command), whether it is passed
 * inline (`bash -c SCRIPT`) or from a private file (`bash FILE`), and the
 * exact size of the resulting argv for the spill planner.
 *
 * The 64 KiB rule is applied to the combined script, so the preamble always
 * runs first whichever way the script travels. Pure: writing the file is
 * `writeScriptFile` (spill-files.ts).
 */
import { Buffer } from "node:buffer";
import type { ArgvSize } from "../env/spill-plan.js";
import { preambleLineBytes, singleQuote } from "./preamble.js";
import {
  MKDTEMP_SUFFIX_LENGTH,
  SCRIPT_FILE_NAME,
  scriptDirTemplate,
  spillDirTemplate,
  spillFileName,
} from "./temp-layout.js";

/** Scripts larger than this (UTF-8 bytes, preamble included) go to a file. */
export const INLINE_SCRIPT_MAX_BYTES = 65_536;

/**
 * The script bash runs: the preamble followed by the command, unchanged.
 * With an empty preamble the result is the command itself, byte for byte.
 */
export function composeScript(preamble: string, command: string): string {
  return preamble === "" ? command : preamble + command;
}

/** True when `script` is over 64 KiB (UTF-8) and must be passed as a file. Pure. */
export function scriptNeedsFile(script: string): boolean {
  return Buffer.byteLength(script, "utf8") > INLINE_SCRIPT_MAX_BYTES;
}

export interface BashInvocationInput {
  /** The resolved interpreter's absolute path (argv[0] after any prefix). */
  readonly bash: string;
  readonly preamble: string;
  readonly command: string;
  /** The script file's path, required when the script needs a file. */
  readonly scriptFile?: string;
  /** Arguments before bash, e.g. ["timeout", "30"]. Default none. */
  readonly argvPrefix?: readonly string[];
  /** Options between bash and the script, e.g. ["--norc", "--noprofile"]. Default none. */
  readonly bashArgs?: readonly string[];
}

export interface BashInvocation {
  readonly mode: "inline" | "file";
  /** preamble + command; write this to `scriptFile` when mode is "file". */
  readonly script: string;
  readonly scriptBytes: number;
  readonly argv: readonly string[];
}

/**
 * Decides how bash receives the script: inline as `[bash, "-c", SCRIPT]`
 * when preamble + command is at most 64 KiB, else `[bash, scriptFile]`.
 * Pure. Throws TypeError when a file is needed and `scriptFile` is missing.
 */
export function bashInvocation(input: BashInvocationInput): BashInvocation {
  const script = composeScript(input.preamble, input.command);
  const scriptBytes = Buffer.byteLength(script, "utf8");
  const head = [...(input.argvPrefix ?? []), input.bash, ...(input.bashArgs ?? [])];
  if (scriptBytes <= INLINE_SCRIPT_MAX_BYTES) {
    return { mode: "inline", script, scriptBytes, argv: [...head, "-c", script] };
  }
  if (input.scriptFile === undefined) {
    throw new TypeError(
      `bashInvocation: the script is ${scriptBytes} bytes (over ${INLINE_SCRIPT_MAX_BYTES}); ` +
        "write it with writeScriptFile and pass scriptFile",
    );
  }
  return { mode: "file", script, scriptBytes, argv: [...head, input.scriptFile] };
}

export interface BashArgvSizerInput {
  readonly bash: string;
  readonly command: string;
  /** The TMPDIR the spill and script files will be written under (default os.tmpdir()). */
  readonly tmpdir?: string;
  readonly argvPrefix?: readonly string[];
  readonly bashArgs?: readonly string[];
}

function bytesOf(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/**
 * Returns the `argvBytes(spilledNames)` function `planSpill` needs for a bash
 * step: the exact argv size once the given names (in this order) are spilled
 * and their preamble lines precede the command, inline or file-backed by the
 * 64 KiB rule.
 *
 * Exact (not a bound) provided the files are then written by
 * `writeSpillFiles` under the same `tmpdir`, in the plan's `spilled` order,
 * and the script file (if any) by `writeScriptFile` under the same `tmpdir`:
 * every path's length is known in advance (mkdtemp adds six characters that
 * are never quotes). Pure in effect; incremental when each call extends the
 * previous list, as `planSpill` does. Passing the same array object again
 * means "only appended to since the last call"; to reuse an array otherwise,
 * pass a copy.
 */
export function bashArgvSizer(
  input: BashArgvSizerInput,
): (spilled: readonly string[]) => Required<ArgvSize> {
  // Everything before the script (or script path) is fixed: prefix, bash, its options.
  const prefix = [...(input.argvPrefix ?? []), ...(input.bashArgs ?? [])];
  let prefixBytes = 0;
  let prefixLongest = 0;
  for (const arg of prefix) {
    const bytes = bytesOf(arg) + 1;
    prefixBytes += bytes;
    prefixLongest = Math.max(prefixLongest, bytes);
  }
  const bashBytes = bytesOf(input.bash) + 1;
  const commandBytes = bytesOf(input.command);
  // The quoted spill path of file i is quote(dir) followed by "/v<i>": the
  // tail has no quote, so it extends the quoted form by its own length.
  const dir = `${spillDirTemplate(input.tmpdir)}${"X".repeat(MKDTEMP_SUFFIX_LENGTH)}`;
  const quotedDirBytes = bytesOf(singleQuote(dir));
  const scriptPathBytes =
    bytesOf(
      `${scriptDirTemplate(input.tmpdir)}${"X".repeat(MKDTEMP_SUFFIX_LENGTH)}/${SCRIPT_FILE_NAME}`,
    ) + 1;

  // Memo of the last list seen and its preamble size, so a list that only
  // grew costs just its new lines.
  // planSpill appends to one array, so the same array with the same last
  // known name skips the prefix comparison.
  const known: string[] = [];
  let knownPreamble = 0;
  let knownArray: readonly string[] | undefined;
  return (spilled) => {
    let start = known.length <= spilled.length ? known.length : 0;
    const appended =
      spilled === knownArray && (start === 0 || spilled[start - 1] === known[start - 1]);
    if (!appended) {
      for (let i = 0; i < start; i++) {
        if (spilled[i] !== known[i]) start = 0;
      }
    }
    knownArray = spilled;
    if (start === 0) {
      known.length = 0;
      knownPreamble = 0;
    }
    for (let i = start; i < spilled.length; i++) {
      const name = spilled[i] ?? "";
      known.push(name);
      const tailBytes = spillFileName(i).length + 1; // "/v<i>"
      knownPreamble += preambleLineBytes(bytesOf(name), quotedDirBytes + tailBytes);
    }
    const preambleBytes = knownPreamble;
    const scriptBytes = preambleBytes + commandBytes;
    if (scriptBytes <= INLINE_SCRIPT_MAX_BYTES) {
      const scriptArg = scriptBytes + 1;
      return {
        bytes: prefixBytes + bashBytes + 3 + scriptArg,
        argc: prefix.length + 3,
        longest: Math.max(prefixLongest, bashBytes, scriptArg),
      };
    }
    return {
      bytes: prefixBytes + bashBytes + scriptPathBytes,
      argc: prefix.length + 2,
      longest: Math.max(prefixLongest, bashBytes, scriptPathBytes),
    };
  };
}
