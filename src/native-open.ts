/**
 * Loads the addon from the files native-locate.ts found fitting, in order:
 * one that the runtime refuses (a C library the file check could not tell
 * apart, a missing symbol) is named and the next is tried, so a fitting file
 * further down the list is never skipped. Then names the file the dynamic
 * loader really mapped, read back from /proc/self/maps (not recomputed).
 */
import { readFileSync, realpathSync } from "node:fs";
import { firstLine } from "./errors.js";

/** What loading found: the module and the path given for it, or why each file failed. */
export type Opened<T> = { module: T; path: string } | { module: undefined; failures: string[] };

/** Loads the first of `paths` that `load` accepts; total (each failure becomes a line). */
export function openFirst<T>(paths: readonly string[], load: (path: string) => T): Opened<T> {
  const failures: string[] = [];
  for (const path of paths) {
    try {
      return { module: load(path), path };
    } catch (error) {
      failures.push(`${path}: ${firstLine(error)}`);
    }
  }
  return { module: undefined, failures };
}

/** The paths of the mapped files of /proc/self/maps text whose name ends in `.node`. */
export function mappedNodeFiles(maps: string): string[] {
  const files = new Set<string>();
  for (const line of maps.split("\n")) {
    const at = line.indexOf("/");
    if (at < 0) continue;
    const path = line.slice(at);
    if (path.endsWith(".node")) files.add(path);
  }
  return [...files];
}

/** The mapped `.node` files of this process (empty when /proc/self/maps cannot be read). */
export function mappedNow(): string[] {
  try {
    return mappedNodeFiles(readFileSync("/proc/self/maps", "latin1"));
  } catch {
    return [];
  }
}

/**
 * The file the loader mapped for `path`: the one `.node` file mapped since
 * `before` was read, else (the loader had it mapped already) the mapped file
 * that is `path` resolved; undefined when neither is seen.
 */
export function loadedFile(
  path: string,
  before: readonly string[],
  after: readonly string[],
): string | undefined {
  const added = after.filter((file) => !before.includes(file));
  if (added.length === 1) return added[0];
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return undefined;
  }
  return after.find((file) => file === real);
}
