/**
 * Which `writable` paths get a writable mount of their own in the read-only
 * mount view (native/core/mount_view.h), decided here so the addon only
 * carries the list. Pure.
 */
import { beneath } from "./sandbox-paths.js";

/**
 * The real writable paths to clone, in order: each once, and none that lies
 * beneath another writable path (it is writable in that one's clone already;
 * a mount of its own would make it a mount point there, which a step could
 * no longer remove or rename: EBUSY). Undefined when `/` itself is writable:
 * there is nothing to make read-only (a clone moved onto `/` would not even
 * be seen, the child's root staying beneath it).
 */
export function viewPaths(write: readonly string[]): string[] | undefined {
  if (write.includes("/")) return undefined;
  return write.filter(
    (path, i) =>
      write.indexOf(path) === i && !write.some((other) => other !== path && beneath(path, other)),
  );
}
