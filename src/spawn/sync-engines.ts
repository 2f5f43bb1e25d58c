/**
 * The two ways `spawnSync` runs a child to completion on the calling thread.
 *
 * Native: the addon's spawnSync (posix_spawn, then one poll(2) loop over the
 * child's pidfd and pipes; no fork, no event loop turn). Fallback:
 * `child_process.spawnSync` with the same environment object as the
 * asynchronous fallback (see docs/fallback.md for what it cannot do).
 */
import { Buffer } from "node:buffer";
import { spawnSync as spawnChildSync } from "node:child_process";
import { constants } from "node:os";
import { systemError } from "../errors.js";
import { explainHelperFailure, type NativeBinding, type RawSyncResult } from "../native.js";
import type { LimitEvents } from "./contain.js";
import { type DeadlinePlan, type Ending, nativeDeadline } from "./deadline-plan.js";
import {
  type EngineRequest,
  limitEventsOf,
  type ResourceUsage,
  resourceUsageOf,
} from "./engine.js";
import { envObject, FallbackUnsupportedError, fallbackIds, utf8 } from "./fallback-engine.js";
import { epochOfMonotonic } from "./monotonic-time.js";
import {
  nativeControls,
  packedArgs,
  posixSpawnAsked,
  stdioFds,
  watchdogStarter,
} from "./native-engine.js";

/** How a synchronous run is fed and bounded. */
export interface SyncBounds {
  readonly input: Buffer | undefined;
  readonly deadline: DeadlinePlan;
}

/** A finished synchronous run, before policy (encoding, failure, rejection). */
export interface SyncExit {
  readonly pid: number;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly resourceUsage: ResourceUsage | null;
  /** Captured bytes of stdout and stderr; null where the slot was not captured. */
  readonly stdout: Buffer | null;
  readonly stderr: Buffer | null;
  /** The run's endings, in order (named by endingFailure). */
  readonly endings: readonly Ending[];
  /** When the first ending's signal went (epoch ms), or null (none, or not known: the fallback). */
  readonly killedAt: number | null;
  /** A step contained in a cgroup: what the kernel counted against its limits. */
  readonly limitEvents?: LimitEvents | undefined;
}

export type SyncEngine = (request: EngineRequest, bounds: SyncBounds) => SyncExit;

type SyncCapable = NativeBinding & Required<Pick<NativeBinding, "spawnSync">>;

export function canRunSyncNatively(binding: NativeBinding | null): binding is SyncCapable {
  return binding !== null && typeof binding.spawnSync === "function";
}

export function nativeSyncEngine(binding: SyncCapable): SyncEngine {
  const posixSpawn = posixSpawnAsked();
  const startWatchdog = watchdogStarter(binding);
  return (request, bounds) => {
    // A contained step's cgroup is registered with the watchdog (host death).
    if (request.contain !== undefined) startWatchdog();
    let raw: RawSyncResult;
    try {
      raw = binding.spawnSync({
        file: request.file,
        ...packedArgs(request),
        cwd: request.cwd,
        stdio: stdioFds(request),
        input: bounds.input,
        deadline: nativeDeadline(bounds.deadline),
        setsid: request.setsid,
        setpgroup: request.setpgroup,
        controls: nativeControls(request, posixSpawn),
        sandbox: request.sandbox,
        contain: request.contain,
      });
    } catch (error) {
      throw explainHelperFailure(error, binding);
    }
    return {
      pid: raw.pid,
      exitCode: raw.exitCode,
      signal: raw.signal,
      resourceUsage: resourceUsageOf(raw),
      stdout: raw.output[1] ?? null,
      stderr: raw.output[2] ?? null,
      endings: raw.endings,
      killedAt: raw.killedAt == null ? null : epochOfMonotonic(raw.killedAt),
      limitEvents: limitEventsOf(raw),
    };
  };
}

/**
 * child_process.spawnSync: forks, cannot signal a process group (a timeout
 * reaches the child only), has no kill grace and reports no resource usage;
 * of the deadline plan it follows the timeout, killSignal and maxBuffer.
 */
export const fallbackSyncEngine: SyncEngine = (request, bounds) => {
  const deadline = bounds.deadline;
  if (request.contain !== undefined) {
    throw new FallbackUnsupportedError("options.contain needs the native engine");
  }
  if (request.sandbox !== undefined) {
    throw new FallbackUnsupportedError("options.sandbox needs the native engine");
  }
  const argv = request.argv.map((arg, i) => utf8(arg, `argv[${i}]`));
  const result = spawnChildSync(request.file, argv.slice(1), {
    argv0: argv[0] ?? request.file,
    env: envObject(request),
    ...fallbackIds(request.controls),
    cwd: request.cwd,
    stdio: request.stdio.slice() as ("pipe" | "ignore" | "inherit" | number)[],
    input: bounds.input,
    timeout: deadline.timeoutMs,
    killSignal: deadline.endSignal,
    maxBuffer: deadline.maxBuffer,
    encoding: "buffer",
    shell: false,
  });
  const error = result.error as NodeJS.ErrnoException | undefined;
  const code = error?.code;
  // EPIPE: the child ended without reading all of its input, which the native engine ignores too.
  const ran = code === "ETIMEDOUT" || code === "ENOBUFS" || (code === "EPIPE" && result.pid > 0);
  if (error !== undefined && !ran) {
    const failure = systemError(error.errno ?? -constants.errno.EIO, "spawn", request.file);
    failure.cause = error;
    throw failure;
  }
  // child_process may keep a chunk beyond maxBuffer; keep exactly what the native engine would.
  const captured = (slot: number): Buffer | null =>
    request.stdio[slot] === "pipe"
      ? (result.output[slot] ?? Buffer.alloc(0)).subarray(0, deadline.maxBuffer)
      : null;
  return {
    pid: result.pid,
    exitCode: result.status,
    signal: result.signal,
    resourceUsage: null,
    stdout: captured(1),
    stderr: captured(2),
    // child_process ends a run only while it has the child to signal.
    endings:
      code === "ETIMEDOUT"
        ? [{ cause: "timeout", leaderRunning: true }]
        : code === "ENOBUFS"
          ? [{ cause: "maxBuffer", leaderRunning: true }]
          : [],
    killedAt: null,
  };
};
