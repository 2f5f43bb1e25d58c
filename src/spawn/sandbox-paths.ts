/**
 * Resolves a sandbox's paths to real paths without letting an earlier step
 * widen a later one: a symbolic link that lies inside a writable directory of
 * the same sandbox could have been made by a sandboxed step (replace
 * `work/tmp` by a link to `~`, and the next step's `writable` follows it), so
 * a path through one is refused with SandboxError ERR_EXACTSPAWN_SANDBOX_PATH.
 * Links elsewhere (`/var/run` → `/run`) are followed.
 *
 * The kernel's realpath answers the common case in one call: a path with no
 * link at all comes back unchanged. Only a path that changed is walked
 * component by component (lstat, readlink). The addon then opens each real
 * path with RESOLVE_NO_SYMLINKS, so a link swapped in after this check fails
 * the spawn (ELOOP) instead of widening it.
 */
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { resolve, sep } from "node:path";
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

function refuse(field: string, link: string, dir: string): never {
  throw new SandboxError(
    "ERR_EXACTSPAWN_SANDBOX_PATH",
    `sandbox: ${field} goes through the symbolic link ${link}, inside the writable directory ${dir}, ` +
      "which a sandboxed step could have made; name the real directory instead",
    [],
    { field, path: link },
  );
}

/** `path` resolved component by component, refusing a link beneath any of `writable`. */
function walk(path: string, field: string, writable: readonly string[]): string {
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
    if (dir !== undefined) refuse(field, next, dir);
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
  const one = (name: string) => (path: string, i: number) => {
    const field = `${name}[${i}]`;
    const real = realOf(path, field);
    if (real === path) return real;
    try {
      return walk(path, field, writableReal);
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
