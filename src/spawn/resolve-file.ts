/**
 * Turns the `file` argument of `spawn` into the absolute path handed to
 * posix_spawn (which never searches PATH itself).
 *
 * A file containing "/" is resolved against `cwd` (the child's directory).
 * Otherwise each entry of the caller's search path is tried in order (an
 * empty entry means `cwd`), keeping the first regular file that is
 * executable. As execvp(3) and child_process do, an entry where nothing can
 * be found is skipped, whatever the reason (no such file, not a directory, a
 * directory this user may not search: a root-only directory first on PATH
 * hides nothing from a host that is not root); a candidate that exists but
 * cannot be executed is remembered and reported as EACCES when nothing
 * better is found. Throws a Node-style system error (ENOENT / EACCES,
 * syscall "posix_spawn").
 */
import { accessSync, constants, type Stats, statSync } from "node:fs";
import { constants as osConstants } from "node:os";
import { resolve } from "node:path";
import { systemError } from "../errors.js";

const { ENOENT, EACCES } = osConstants.errno;

/** An empty, "." or ".." segment, or a trailing "/": what path.resolve would rewrite. */
const NOT_NORMAL = /\/(?:\.{1,2})?(?:\/|$)/;

export function resolveFile(file: string, searchPath: string | undefined, cwd: string): string {
  if (file.length === 0) throw systemError(ENOENT, "posix_spawn", file);
  if (file.includes("/")) {
    // An absolute path resolve() would return unchanged is used as it is.
    return file.charCodeAt(0) === 0x2f && !NOT_NORMAL.test(file) ? file : resolve(cwd, file);
  }
  let denied = false;
  for (const dir of (searchPath ?? "").split(":")) {
    if (searchPath === undefined || searchPath === "") break;
    const candidate = resolve(cwd, dir === "" ? "." : dir, file);
    const stats = statOrUndefined(candidate);
    if (stats === undefined) continue;
    if (!stats.isFile()) {
      denied = true;
      continue;
    }
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      denied = true;
    }
  }
  throw systemError(denied ? EACCES : ENOENT, "posix_spawn", file);
}

/** The candidate's stat, or undefined when it cannot be seen (ENOENT, ENOTDIR, EACCES, ELOOP…). */
function statOrUndefined(candidate: string): Stats | undefined {
  try {
    return statSync(candidate);
  } catch {
    return undefined;
  }
}
