/**
 * The bash preamble that reads spilled step values back into shell variables
 * from the descriptor the library passed, then closes it.
 *
 * One line per spilled variable, then one that closes the descriptor:
 *   LC_ALL=C IFS= read -r -N BYTES -u FD NAME || { printf 'exactspawn: failed to load spilled env value NAME\n' >&2; exit 125; }
 *   exec FD<&-
 *
 * All values share one descriptor, concatenated in order; each line takes
 * exactly its value's BYTES. `-N` reads exactly that many characters and
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
import { isSpillableName } from "../env/names.js";
import { displayName, InvalidEnvError } from "../errors.js";

/** One spilled variable and its value's length in bytes, in the order the values were written. */
export interface SpillRead {
  readonly name: string;
  readonly bytes: number;
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
  for (const { name, bytes } of spills) {
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
    out += readLine(name, bytes, fds.values);
  }
  return out + closeLine(fds.values);
}
