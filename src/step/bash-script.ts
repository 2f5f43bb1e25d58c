/**
 * The script a bash step runs (preamble + command), whether it is passed
 * inline (`bash -c SCRIPT`) or through a descriptor (`bash -c LOADER`, the
 * loader sourcing the script from that descriptor), and the exact size of
 * the resulting argv for the spill planner.
 *
 * The 64 KiB rule is applied to the values preamble plus the command, so the
 * preamble always runs first whichever way the script travels. Pure: opening
 * the descriptors is spill-files.ts.
 */
import { Buffer } from "node:buffer";
import type { ArgvSize } from "../env/spill-plan.js";
import {
  assignLine,
  copyLine,
  loadLine,
  renderPreamble,
  type SpillRead,
  scriptLoader,
  valuesEnd,
} from "./preamble.js";
import { spillSlots } from "./temp-layout.js";

/** Scripts larger than this (UTF-8 bytes, values preamble included) travel through a descriptor. */
export const INLINE_SCRIPT_MAX_BYTES = 65_536;

/**
 * The script bash runs: the preamble followed by the command, unchanged.
 * With an empty preamble the result is the command itself, byte for byte.
 */
export function composeScript(preamble: string, command: string): string {
  return preamble === "" ? command : preamble + command;
}

/** True when `script` is over 64 KiB (UTF-8) and must travel through a descriptor. Pure. */
export function scriptNeedsFile(script: string): boolean {
  return Buffer.byteLength(script, "utf8") > INLINE_SCRIPT_MAX_BYTES;
}

export interface BashInvocationInput {
  /** The resolved interpreter's absolute path (argv[0] after any prefix). */
  readonly bash: string;
  readonly command: string;
  /** The spilled values in the order they were written to the values descriptor. */
  readonly spills?: readonly SpillRead[];
  /** The first descriptor after the step's stdio slots (3 with the default stdio). */
  readonly firstSlot?: number;
  /** Arguments before bash, e.g. ["timeout", "30"]. Default none. */
  readonly argvPrefix?: readonly string[];
  /** Options between bash and `-c`, e.g. ["--norc", "--noprofile"]. Default none. */
  readonly bashArgs?: readonly string[];
  /**
   * Send the script through a descriptor whatever its size (the planner asks
   * for it when an inline preamble would not fit beside the trusted
   * variables). Default false: the 64 KiB rule decides.
   */
  readonly forceFile?: boolean;
}

export interface BashInvocation {
  readonly mode: "inline" | "file";
  /** What bash runs (preamble + command); the descriptor's content when mode is "file". */
  readonly script: string;
  readonly scriptBytes: number;
  readonly argv: readonly string[];
  /** The values descriptor's number, when something spilled. */
  readonly valuesFd: number | undefined;
  /** The script descriptor's number, when mode is "file". */
  readonly scriptFd: number | undefined;
}

/**
 * Decides how bash receives the script: inline as `[bash, "-c", SCRIPT]`
 * when the values preamble + command is at most 64 KiB, else
 * `[bash, "-c", LOADER]` with the script (which then starts by closing its
 * descriptor) to be passed at `scriptFd`. Pure.
 */
export function bashInvocation(input: BashInvocationInput): BashInvocation {
  const spills = input.spills ?? [];
  const base = input.firstSlot ?? 3;
  const head = [...(input.argvPrefix ?? []), input.bash, ...(input.bashArgs ?? []), "-c"];
  const inlineSlots = spillSlots(base, spills.length > 0, false);
  const inline = composeScript(renderPreamble(spills, inlineSlots), input.command);
  const inlineBytes = Buffer.byteLength(inline, "utf8");
  if (inlineBytes <= INLINE_SCRIPT_MAX_BYTES && input.forceFile !== true) {
    return {
      mode: "inline",
      script: inline,
      scriptBytes: inlineBytes,
      argv: [...head, inline],
      valuesFd: inlineSlots.values,
      scriptFd: undefined,
    };
  }
  const slots = spillSlots(base, spills.length > 0, true);
  const script = composeScript(renderPreamble(spills, slots), input.command);
  return {
    mode: "file",
    script,
    scriptBytes: Buffer.byteLength(script, "utf8"),
    argv: [...head, scriptLoader(slots.script!)],
    valuesFd: slots.values,
    scriptFd: slots.script,
  };
}

export interface BashArgvSizerInput {
  readonly bash: string;
  readonly command: string;
  /**
   * A spilled variable's value (each read line states its byte length; an
   * identical earlier value is copied instead). Called once per name the
   * planner tries.
   */
  readonly value: (name: string) => string;
  /** The first descriptor after the step's stdio slots. Default 3. */
  readonly firstSlot?: number;
  readonly argvPrefix?: readonly string[];
  readonly bashArgs?: readonly string[];
  /** As bashInvocation's `forceFile`. */
  readonly forceFile?: boolean;
}

function bytesOf(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/**
 * Returns the `argvBytes(spilledNames)` function `planSpill` needs for a bash
 * step: the exact argv size once the given names (in this order) are spilled
 * and their preamble lines precede the command, inline or through a
 * descriptor by the 64 KiB rule.
 *
 * Exact (not a bound): it sums the very lines `renderPreamble` renders, with
 * the descriptor numbers `bashInvocation` assigns; no path is involved.
 * Incremental when each call extends the previous list, as `planSpill`
 * does. Passing the same array object again means "only appended to since
 * the last call"; to reuse an array otherwise, pass a copy.
 */
export function bashArgvSizer(
  input: BashArgvSizerInput,
): (spilled: readonly string[]) => Required<ArgvSize> {
  // Everything before the script (or loader) is fixed: prefix, bash, its options, "-c".
  const prefix = [...(input.argvPrefix ?? []), ...(input.bashArgs ?? []), "-c"];
  let prefixBytes = 0;
  let prefixLongest = 0;
  for (const arg of prefix) {
    const bytes = bytesOf(arg) + 1;
    prefixBytes += bytes;
    prefixLongest = Math.max(prefixLongest, bytes);
  }
  const bashBytes = bytesOf(input.bash) + 1;
  const commandBytes = bytesOf(input.command);
  const base = input.firstSlot ?? 3;
  const argc = prefix.length + 2; // prefix, bash, the script or loader
  const size = (scriptArg: number): Required<ArgvSize> => ({
    bytes: prefixBytes + bashBytes + scriptArg,
    argc,
    longest: Math.max(prefixLongest, bashBytes, scriptArg),
  });

  // Memo of the last list seen and the byte size of its read lines, so a
  // list that only grew costs just its new lines. The values descriptor is
  // `base` whichever way the script travels; only the close line and the
  // loader depend on the mode.
  const known: string[] = [];
  const firstByValue = new Map<string, string>();
  let knownReads = 0;
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
      firstByValue.clear();
      knownReads = 0;
    }
    for (let i = start; i < spilled.length; i++) {
      const name = spilled[i] ?? "";
      known.push(name);
      // The same rule as spillReads: a value seen before is copied, not read.
      const value = input.value(name);
      const earlier = firstByValue.get(value);
      if (earlier === undefined) {
        knownReads += bytesOf(assignLine(name, firstByValue.size));
        firstByValue.set(value, name);
      } else {
        knownReads += bytesOf(copyLine(name, earlier));
      }
    }
    const hasValues = spilled.length > 0;
    const valuesPreamble = hasValues
      ? bytesOf(loadLine(firstByValue.size, base)) + knownReads + bytesOf(valuesEnd(base))
      : 0;
    const inlineBytes = valuesPreamble + commandBytes;
    if (inlineBytes <= INLINE_SCRIPT_MAX_BYTES && input.forceFile !== true) {
      return size(inlineBytes + 1);
    }
    const slots = spillSlots(base, hasValues, true);
    return size(bytesOf(scriptLoader(slots.script!)) + 1);
  };
}
