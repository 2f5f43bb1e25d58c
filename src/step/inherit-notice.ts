/**
 * The first-use notice of the curated default (ARCHITECTURE "One bash step",
 * step 2): a runtime whose host did not choose what steps inherit says once,
 * on its first step, how many parent variables it left out and the first
 * names, so a host that relied on inheriting everything finds out from its
 * log rather than from a failing tool. Names and counts only, never a value;
 * the full list is in each result's `dropped` and in `explain`. On a root
 * host it also says that the default does not keep steps from the host's
 * own environment: root steps read /proc/<host>/environ whatever the host
 * does (docs/runtime.md, "The host's /proc entries").
 */
import type { InheritedDrop } from "../env/inherited.js";
import { type Logger, logger as libraryLogger } from "../log.js";

/** How many names a notice lists; the count covers the rest. */
export const NOTICE_NAMES = 10;

/**
 * A function that logs the notice on its first call (WARN, `event:
 * "inherit.curated"`, through the first step's logger when given) and does nothing after; it never logs when `chosen`
 * (the host set `inherit` itself) or when nothing was left out.
 */
export function curatedInheritNotice(
  dropped: readonly InheritedDrop[],
  chosen: boolean,
  runtimeLog: Logger | undefined,
  rootHost: boolean = process.geteuid?.() === 0,
): (stepLog?: Logger) => void {
  let pending = !chosen;
  return (stepLog?: Logger) => {
    const log = stepLog ?? runtimeLog;
    if (!pending) return;
    pending = false;
    const left = dropped.filter((d) => d.reason === "not_allowed").map((d) => d.name);
    if (left.length === 0) return;
    left.sort();
    (log ?? libraryLogger()).warn(
      {
        event: "inherit.curated",
        notInherited: left.length,
        names: left.slice(0, NOTICE_NAMES),
        ...(rootHost ? { rootHost: true } : {}),
      },
      'steps inherit the essentials and the names you allow only; pass inherit: "all" ' +
        "or list names in allow to pass more (each result's dropped lists them)" +
        (rootHost
          ? "; as root, steps can still read this host's own environment in /proc: " +
            "give them uid or sandbox"
          : ""),
    );
  };
}
