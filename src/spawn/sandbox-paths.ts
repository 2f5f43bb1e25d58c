/**
 * Resolves a sandbox's paths to real paths without following a symbolic link
 * that a step, or another user, could have made. A sandboxed step may make
 * links beneath its `writable` paths; were a later step's paths resolved by
 * following every link, one step could widen the next (step 1, writable
 * `ws`, replaces `ws/build` by a link to `/root`; step 2, writable
 * `ws/build`, would then write in `/root`). The library cannot know what
 * earlier steps, of this host or another, were granted, so a link is
 * followed only where no step could have written it:
 *
 * - in a system directory: `/`, `/dev` or `/var` themselves, or `/etc`,
 *   `/usr` or beneath them. No host grants a step those without handing it
 *   the machine (what root runs and reads lives there; a writable path under
 *   `/usr` also overlaps the default `executable` list and is refused);
 * - whose every directory from `/` down is owned by root and writable by
 *   root only: a link another user made (in `/tmp`, say, whatever
 *   fs.protected_symlinks says) or that a step of a host that is not root
 *   made is never followed;
 * - and not beneath a `writable` path of the same sandbox (`/etc/app`).
 *
 * So `/lib64` → `usr/lib64`, `/bin` → `usr/bin`, `/var/run` → `/run`,
 * `/etc/localtime` and `/usr/bin/python3` resolve as before; any other link
 * on the way is refused with SandboxError ERR_EXACTSPAWN_SANDBOX_PATH.
 *
 * The kernel's realpath answers the common case in one call: a path with no
 * link at all comes back unchanged. Only a path that changed is walked
 * component by component (lstat, readlink). The addon then opens each real
 * path with RESOLVE_NO_SYMLINKS, so a link swapped in after this check fails
 * the spawn (ELOOP) instead of widening it.
 */
import { lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { dirname, resolve, sep } from "node:path";
import { SandboxError } from "./sandbox-error.js";

/** Symbolic links followed in one path before ELOOP, as the kernel's MAXSYMLINKS. */
const MAX_LINKS = 40;

export function beneath(path: string, dir: string): boolean {
  return path === dir || dir === sep || path.startsWith(dir + sep);
}

/** A system error (ENOENT…) from resolving `field`, its message naming the field. */
function named(error: unknown, field: string): unknown {
  if (error instanceof Error && "code" in error && !(error instanceof SandboxError)) {
    error.message = `sandbox.${field}: ${error.message}`;
    Object.defineProperty(error, "field", { value: field, enumerable: true });
  }
  return error;
}

/** Directories a link is followed in, themselves only. */
const SYSTEM_DIRS = new Set(["/", "/dev", "/var"]);
/** Directories a link is followed in, and every directory beneath them. */
const SYSTEM_TREES = ["/etc", "/usr"];

function systemDirectory(dir: string): boolean {
  return SYSTEM_DIRS.has(dir) || SYSTEM_TREES.some((tree) => beneath(dir, tree));
}

/** Whether `dir` (a real path) and every directory above it are root's, writable by root only. */
function rootOnly(dir: string, known: Map<string, boolean>): boolean {
  let answer = known.get(dir);
  if (answer === undefined) {
    const stat = statSync(dir);
    answer =
      stat.uid === 0 && (stat.mode & 0o022) === 0 && (dir === sep || rootOnly(dirname(dir), known));
    known.set(dir, answer);
  }
  return answer;
}

function refuse(field: string, link: string, dir: string, writable: string | undefined): never {
  const where =
    writable === undefined
      ? `in ${dir}, which a step or another user could have made (links are followed only in /, ` +
        "/dev and /var and beneath /etc and /usr, where root alone can write)"
      : `inside the writable directory ${writable}, which a sandboxed step could have made`;
  throw new SandboxError(
    "ERR_EXACTSPAWN_SANDBOX_PATH",
    `sandbox: ${field} goes through the symbolic link ${link}, ${where}; name the real directory instead`,
    [],
    { field, path: link },
  );
}

/** `path` resolved component by component, following only the links the rule above allows. */
function walk(
  path: string,
  field: string,
  writable: readonly string[],
  known: Map<string, boolean>,
): string {
  let rest = path.split(sep).filter((part) => part.length > 0);
  let current: string = sep;
  let links = 0;
  while (rest.length > 0) {
    const [part, ...tail] = rest as [string, ...string[]];
    rest = tail;
    if (part === ".") continue;
    if (part === "..") {
      current = resolve(current, "..");
      continue;
    }
    const next = current === sep ? `${sep}${part}` : `${current}${sep}${part}`;
    if (!lstatSync(next).isSymbolicLink()) {
      current = next;
      continue;
    }
    const dir = writable.find((w) => beneath(current, w));
    if (dir !== undefined) refuse(field, next, current, dir);
    if (!systemDirectory(current) || !rootOnly(current, known)) {
      refuse(field, next, current, undefined);
    }
    if (++links > MAX_LINKS) {
      throw Object.assign(new Error(`ELOOP: too many symbolic links, ${path}`), {
        code: "ELOOP",
        syscall: "realpath",
        path,
      });
    }
    const target = readlinkSync(next);
    rest = [...target.split(sep).filter((p) => p.length > 0), ...rest];
    if (target.startsWith(sep)) current = sep;
  }
  return current;
}

export interface SandboxPathFields {
  readonly writable: readonly string[];
  readonly readable: readonly string[] | undefined;
  readonly executable: readonly string[] | undefined;
}

/**
 * Real paths for every field, in order. Throws a system error naming the
 * field (ENOENT…) or SandboxError ERR_EXACTSPAWN_SANDBOX_PATH.
 */
export function resolveSandboxPaths(fields: SandboxPathFields): {
  write: string[];
  read: string[] | undefined;
  exec: string[] | undefined;
} {
  const realOf = (path: string, field: string): string => {
    try {
      return realpathSync.native(path);
    } catch (error) {
      throw named(error, field);
    }
  };
  // Where a sandboxed step may have made links: every writable directory, by
  // its real path today (a redirected one included, which only adds to it).
  const writableReal = fields.writable.map((path, i) => realOf(path, `writable[${i}]`));
  const known = new Map<string, boolean>();
  const one = (name: string) => (path: string, i: number) => {
    const field = `${name}[${i}]`;
    const real = realOf(path, field);
    if (real === path) return real;
    try {
      return walk(path, field, writableReal, known);
    } catch (error) {
      throw named(error, field);
    }
  };
  return {
    write: fields.writable.map(one("writable")),
    read: fields.readable?.map(one("readable")),
    exec: fields.executable?.map(one("executable")),
  };
}
