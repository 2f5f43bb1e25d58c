/**
 * Where the private temporary files of a bash step live, shared by the code
 * that writes them and the code that predicts their paths' sizes.
 *
 *   <TMPDIR>/exactspawn-spill-XXXXXX/v0, v1, …   (one directory per step)
 *   <TMPDIR>/exactspawn-script-XXXXXX/script.sh  (scripts over 64 KiB)
 *
 * XXXXXX is the six characters mkdtemp(3) appends ([A-Za-z0-9], never a
 * quote), so the length of every path is known before it is created.
 */
import { tmpdir as osTmpdir } from "node:os";
import { join, resolve } from "node:path";

export const SPILL_DIR_PREFIX = "exactspawn-spill-";
export const SCRIPT_DIR_PREFIX = "exactspawn-script-";
export const SCRIPT_FILE_NAME = "script.sh";
/** Characters mkdtemp(3) appends to the prefix. */
export const MKDTEMP_SUFFIX_LENGTH = 6;

/** The absolute temporary root: `tmpdir` resolved, default `os.tmpdir()`. */
export function tempRoot(tmpdir?: string): string {
  return resolve(tmpdir ?? osTmpdir());
}

/** The mkdtemp template prefix for a step's spill directory. */
export function spillDirTemplate(tmpdir?: string): string {
  return join(tempRoot(tmpdir), SPILL_DIR_PREFIX);
}

/** The mkdtemp template prefix for a large script's directory. */
export function scriptDirTemplate(tmpdir?: string): string {
  return join(tempRoot(tmpdir), SCRIPT_DIR_PREFIX);
}

/** The file name of the spill file at `index` in the plan's order. */
export function spillFileName(index: number): string {
  return `v${index}`;
}
