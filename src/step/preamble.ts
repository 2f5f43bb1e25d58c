/**
 * The bash preamble that reads spilled step values back into shell variables.
 *
 * One line per spilled variable:
 *   { IFS= read -r -d '' NAME || :; } < 'PATH' || { printf 'exactspawn: failed to load spilled env value NAME\n' >&2; exit 125; }
 *
 * `IFS=` keeps leading/trailing whitespace, `-r` keeps backslashes, `-d ''`
 * reads up to the first NUL (there is none: NUL values never spill), so the
 * whole file, trailing newlines included, lands in NAME byte for byte. `read`
 * returns 1 at end of file, hence `|| :`. The redirection failing (missing or
 * unreadable file) fails the group, and the step stops with status 125 and a
 * message naming only the variable. The only shell text is this fixed syntax,
 * a validated identifier and a single-quoted path: value bytes never appear.
 */
import { Buffer } from "node:buffer";
import { isSpillableName } from "../env/names.js";
import { displayName, InvalidEnvError } from "../errors.js";

/** One spilled variable and the absolute path of the file holding its value. */
export interface SpillFileRef {
  readonly name: string;
  readonly path: string;
}

/** Exit status of a step whose preamble could not load a spilled value. */
export const PREAMBLE_FAILURE_STATUS = 125;

/** Quotes `text` for bash: single quotes, each `'` written as `'\''`. */
export function singleQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

function line(name: string, quotedPath: string): string {
  return (
    `{ IFS= read -r -d '' ${name} || :; } < ${quotedPath} || ` +
    `{ printf 'exactspawn: failed to load spilled env value ${name}\\n' >&2; exit ${PREAMBLE_FAILURE_STATUS}; }\n`
  );
}

/** Bytes of one line without its name (which appears twice) and quoted path. */
const LINE_FIXED_BYTES = Buffer.byteLength(line("", ""), "utf8");

/**
 * UTF-8 bytes of the preamble line for a name of `nameBytes` bytes and a path
 * whose single-quoted form takes `quotedPathBytes` bytes (newline included).
 * Exact by construction: it uses the same template as `renderPreamble`.
 */
export function preambleLineBytes(nameBytes: number, quotedPathBytes: number): number {
  return LINE_FIXED_BYTES + 2 * nameBytes + quotedPathBytes;
}

/**
 * Renders the preamble: one newline-terminated line per spill, in the given
 * order; "" for none. Pure. Throws InvalidEnvError when a name is not
 * spillable or a path is not absolute or contains NUL (never echoes values;
 * it is never given any).
 */
export function renderPreamble(spills: readonly SpillFileRef[]): string {
  let out = "";
  for (const { name, path } of spills) {
    if (!isSpillableName(name)) {
      throw new InvalidEnvError(
        `renderPreamble: ${displayName(name)} is not a spillable name`,
        name,
      );
    }
    if (typeof path !== "string" || !path.startsWith("/") || path.includes("\0")) {
      throw new InvalidEnvError(
        `renderPreamble: the spill path for ${name} must be absolute and free of NUL`,
        name,
      );
    }
    out += line(name, singleQuote(path));
  }
  return out;
}
