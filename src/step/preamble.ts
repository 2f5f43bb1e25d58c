/**
 * The bash preamble that reads spilled step values back into shell variables
 * from the descriptor the library passed, then closes it.
 *
 * The descriptor holds each value once, in order, each followed by a NUL,
 * then the end mark `.` and a NUL (see `spillValuesBytes`). The preamble:
 *   mapfile -d '' -u FD __exactspawn_spill && [ "${#__exactspawn_spill[@]}" = K+1 ] && [ "${__exactspawn_spill[K]}" = . ] || { printf 'exactspawn: failed to load the spilled env values\n' >&2; exit 125; }
 *   NAME=${__exactspawn_spill[i]}          one per value read
 *   ALIAS=$NAME                          one per value identical to an earlier one
 *   unset __exactspawn_spill
 *   exec FD<&-
 *
 * `mapfile -d ''` splits at NUL and stores every other byte as it is (no
 * word splitting, no backslash processing, whatever the locale), and an
 * assignment from an array element or a variable is byte-exact (no
 * splitting or globbing). NUL never spills (the planner refuses it), because
 * bash cannot hold it; it can only end a value. From a seekable descriptor
 * (memfd or regular file) bash reads in blocks: about 3.5 times faster than
 * `read -r -N BYTES` per value, which walks the value a byte at a time.
 *
 * Fails closed: the record count and the end mark catch a descriptor that
 * cannot be read (closed, a directory, EIO: mapfile stops early), a short or
 * truncated one (the end mark is missing) and an extra NUL (one record too
 * many); the step then stops with status 125 and a message naming no value.
 * The descriptor is closed and the array unset before the command runs, so
 * no process the step starts inherits either. The only shell text is this
 * fixed syntax, numbers and validated identifiers: value bytes never appear
 * in the script.
 */
import { Buffer } from "node:buffer";
import { utf8Bytes } from "../env/env-input.js";
import { isSpillableName } from "../env/names.js";
import { displayName, InvalidEnvError } from "../errors.js";

/**
 * One spilled variable and its value's length in bytes, in the order the
 * values were written. With `sameAs`, the value is identical to that earlier
 * variable's (a step value and its alias): it is not written again, and the
 * preamble copies it (`NAME=$EARLIER`, byte-exact: no splitting or globbing
 * in an assignment) instead of reading it a second time.
 */
export interface SpillRead {
  readonly name: string;
  readonly bytes: number;
  readonly sameAs?: string | undefined;
}

/**
 * The reads for spilled `names` in order: a string value equal to an
 * earlier one's becomes a copy of it (`sameAs`). Pure; the planner's sizer,
 * the invocation and the descriptor writer all use this same rule.
 */
export function spillReads(
  names: readonly string[],
  value: (name: string) => string | Buffer,
): SpillRead[] {
  const first = new Map<string, string>();
  return names.map((name) => {
    const v = value(name);
    if (typeof v !== "string") return { name, bytes: v.length };
    const bytes = utf8Bytes(v);
    const earlier = first.get(v);
    if (earlier !== undefined) return { name, bytes, sameAs: earlier };
    first.set(v, name);
    return { name, bytes };
  });
}

/** Exit status of a step whose preamble could not load a spilled value or its script. */
export const PREAMBLE_FAILURE_STATUS = 125;

/** Quotes `text` for bash: single quotes, each `'` written as `'\''`. */
export function singleQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

function failWith(what: string): string {
  return `{ printf 'exactspawn: failed to load ${what}\\n' >&2; exit ${PREAMBLE_FAILURE_STATUS}; }`;
}

/**
 * The array the values are read into, unset before the command runs. Lower
 * case: untrusted input only ever names CTX_*, RECIPE_VAR_* and upper-case
 * bare names, so no context key or step value can collide with it.
 */
export const SPILL_ARRAY = "__exactspawn_spill";

/** The record that ends the values descriptor (`.` then NUL). */
const END_MARK = ".";

/** The bytes of the values descriptor: each value then NUL, then the end mark and NUL. */
export function spillValuesBytes(values: readonly (string | Buffer)[]): Buffer {
  let size = END_MARK.length + 1;
  for (const value of values) {
    size += (typeof value === "string" ? utf8Bytes(value) : value.length) + 1;
  }
  const out = Buffer.allocUnsafe(size);
  let offset = 0;
  for (const value of values) {
    offset +=
      typeof value === "string" ? out.write(value, offset, "utf8") : value.copy(out, offset);
    out[offset++] = 0;
  }
  offset += out.write(END_MARK, offset, "latin1");
  out[offset++] = 0;
  if (offset !== size)
    throw new Error("spillValuesBytes: encoded size differs from the measured one");
  return out;
}

/** The line that reads all `count` values (and the end mark) from `fd` into SPILL_ARRAY. */
export function loadLine(count: number, fd: number): string {
  return (
    `mapfile -d '' -u ${fd} ${SPILL_ARRAY} && [ "\${#${SPILL_ARRAY}[@]}" = ${count + 1} ] && ` +
    `[ "\${${SPILL_ARRAY}[${count}]}" = ${END_MARK} ] || ${failWith("the spilled env values")}\n`
  );
}

/** The line that gives `name` the value read at `index`. Names are ASCII identifiers. */
export function assignLine(name: string, index: number): string {
  return `${name}=\${${SPILL_ARRAY}[${index}]}\n`;
}

/** The lines that drop the array and close the values descriptor. */
export function valuesEnd(fd: number): string {
  return `unset ${SPILL_ARRAY}\n${closeLine(fd)}`;
}

/** The line that gives `name` the value already read into `from`. */
export function copyLine(name: string, from: string): string {
  return `${name}=$${from}\n`;
}

/** The line that closes descriptor `fd` in the step's shell. */
export function closeLine(fd: number): string {
  return `exec ${fd}<&-\n`;
}

/**
 * The `-c` text of a step whose script travels through descriptor `fd`:
 * it stops with status 125 when the descriptor is not a readable regular
 * file, else sources it (so `$0` stays the interpreter, as with an inline
 * script). The script itself starts by closing `fd`.
 */
export function scriptLoader(fd: number): string {
  const path = `/proc/self/fd/${fd}`;
  return `[ -f ${path} ] && [ -r ${path} ] || ${failWith("the step script")}; . ${path}`;
}

function checkFd(fd: number, what: string): void {
  if (!Number.isSafeInteger(fd) || fd < 3) {
    throw new TypeError(`renderPreamble: the ${what} descriptor must be an integer of at least 3`);
  }
}

/**
 * Renders the preamble: with a script descriptor, first the line closing
 * it; then the line loading the values, one assignment per spill in the
 * order the values were written, and the lines dropping the array and
 * closing the values descriptor; "" for neither. Pure. Throws
 * InvalidEnvError for a name that is not spillable or a byte count that is
 * not a positive integer (it is never given values), TypeError for a bad
 * descriptor.
 */
export function renderPreamble(
  spills: readonly SpillRead[],
  fds: { readonly values?: number | undefined; readonly script?: number | undefined } = {},
): string {
  let out = "";
  if (fds.script !== undefined) {
    checkFd(fds.script, "script");
    out += closeLine(fds.script);
  }
  if (spills.length === 0) return out;
  if (fds.values === undefined)
    throw new TypeError("renderPreamble: spills need a values descriptor");
  checkFd(fds.values, "values");
  const read = new Set<string>();
  let body = "";
  for (const { name, bytes, sameAs } of spills) {
    if (!isSpillableName(name)) {
      throw new InvalidEnvError(
        `renderPreamble: ${displayName(name)} is not a spillable name`,
        name,
      );
    }
    if (!Number.isSafeInteger(bytes) || bytes < 1) {
      throw new InvalidEnvError(
        `renderPreamble: the spilled value of ${name} must be a positive number of bytes`,
        name,
      );
    }
    if (sameAs === undefined) {
      body += assignLine(name, read.size);
      read.add(name);
    } else if (read.has(sameAs)) {
      body += copyLine(name, sameAs);
    } else {
      throw new InvalidEnvError(
        `renderPreamble: ${name} copies ${displayName(sameAs)}, which is not read before it`,
        name,
      );
    }
  }
  return out + loadLine(read.size, fds.values) + body + valuesEnd(fds.values);
}
