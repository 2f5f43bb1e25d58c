/**
 * The bash preamble that reads spilled step values back into shell variables
 * from the descriptor the library passed, then closes it.
 *
 * One line per spilled variable, then one that closes the descriptor:
 *   LC_ALL=C IFS= read -r -N BYTES -u FD NAME || { printf 'exactspawn: failed to load spilled env value NAME\n' >&2; exit 125; }
 *   exec FD<&-
 *
 * All values share one descriptor, concatenated in order; each line takes
 * exactly its value's BYTES. A value identical to an earlier one (a step
 * value's alias) is written once and copied: `NAME=$EARLIER`. `-N` reads exactly that many characters and
 * ignores delimiters, so newlines (trailing ones too), backslashes (`-r`),
 * and leading or trailing blanks (`IFS=`) are kept byte for byte; `LC_ALL=C`
 * (for this command only) makes a character one byte, so any byte sequence
 * without NUL reads back unchanged. From a seekable descriptor (memfd or
 * regular file) bash reads `-N` in blocks, not byte by byte. NUL never
 * spills (the planner refuses it), because bash cannot hold it.
 *
 * Fails closed: `read` returns non-zero on any read error (a closed
 * descriptor, a directory, EIO) and on end of file before BYTES, and the step
 * then stops with status 125 and a message naming only the variable. The
 * descriptor is closed before the command runs, so no process the step
 * starts inherits it. The only shell text is this fixed syntax, numbers and
 * a validated identifier: value bytes never appear in the script.
 */
import { Buffer } from "node:buffer";
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
    const bytes = Buffer.byteLength(v, "utf8");
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

/** The line that reads one value. Names are ASCII identifiers, so `.length` is its byte count. */
export function readLine(name: string, bytes: number, fd: number): string {
  return `LC_ALL=C IFS= read -r -N ${bytes} -u ${fd} ${name} || ${failWith(`spilled env value ${name}`)}\n`;
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
 * it; then one read line per spill, in the order the values were written,
 * and the line closing the values descriptor; "" for neither. Pure. Throws
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
      out += readLine(name, bytes, fds.values);
      read.add(name);
    } else if (read.has(sameAs)) {
      out += copyLine(name, sameAs);
    } else {
      throw new InvalidEnvError(
        `renderPreamble: ${name} copies ${displayName(sameAs)}, which is not read before it`,
        name,
      );
    }
  }
  return out + closeLine(fds.values);
}
