/**
 * The host's own /proc entries, kept from its steps. The curated default
 * keeps the host's tokens out of every step's environment, but the host's
 * exec-time environment stays readable at /proc/<host>/environ (and its
 * memory at /proc/<host>/mem) to every process of its uid: a step of a host
 * without privileges could read them. A process that is not dumpable
 * (prctl PR_SET_DUMPABLE 0) has its /proc entries owned by root and refuses
 * that access to processes of its uid without CAP_SYS_PTRACE; the flag is
 * the whole process's and execve(2) resets it, so children are unaffected.
 *
 * The decision lives here (the addon only makes the call, native/core/dumpable.h):
 * createRuntime makes the host non-dumpable unless the runtime says
 * `hostDumpable: true`, and nothing makes it dumpable again (another runtime
 * of the same process may rely on it). The cost, documented in
 * docs/security.md: no core dumps of the host, its /proc/self entries that
 * are mode 0400 (environ, auxv, io, mem) unreadable to itself when it is not
 * root, and no same-uid debugger or profiler attaching to it.
 *
 * A root host's steps hold CAP_SYS_PTRACE unless they drop it (`uid`,
 * `sandbox`): nothing here confines them. Without the addon the call cannot
 * be made: one warning per process, naming the cause, never a value.
 */
import { type Logger, logger as libraryLogger } from "./log.js";
import { type NativeBinding, nativeBinding } from "./native.js";

/** What the host's dumpable flag is after guardHostProc. */
export type HostProcGuard = "non-dumpable" | "dumpable";

let warned = false;

/**
 * Makes the host non-dumpable (see the file comment); total: never throws.
 * Returns "dumpable" when it could not (no addon, or prctl failed: warns once
 * per process, event "host.dumpable").
 */
export function guardHostProc(
  binding: NativeBinding | null = nativeBinding(),
  log: Logger = libraryLogger(),
): HostProcGuard {
  const cause =
    binding?.setDumpable === undefined
      ? "the native addon is not loaded"
      : errnoCause(binding.setDumpable(false));
  if (cause === undefined) return "non-dumpable";
  if (!warned) {
    warned = true;
    log.warn(
      { event: "host.dumpable", cause },
      "this host stays dumpable: its steps can read its /proc entries (its environment, with " +
        "any token in it, at /proc/<pid>/environ); run them with uid or sandbox",
    );
  }
  return "dumpable";
}

function errnoCause(result: number): string | undefined {
  return result === 0 ? undefined : `prctl(PR_SET_DUMPABLE) failed (errno ${-result})`;
}

/** For tests: the next failure warns again. */
export function resetHostProcWarning(): void {
  warned = false;
}
