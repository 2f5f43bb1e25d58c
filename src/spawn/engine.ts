/**
 * The contract between the Subprocess (policy) and the two ways of starting
 * a child: the native addon and the child_process fallback. Types only.
 */
import type { Buffer } from "node:buffer";
import type { Readable, Writable } from "node:stream";
import type { EnvEntry } from "../env/env-input.js";
import type { RawContain, RawSandbox, RawTreeUsage } from "../native.js";
import type { LimitEvents } from "./contain.js";
import type { DeadlinePlan, EndingRecord } from "./deadline-plan.js";
import type { ExecControls } from "./exec-controls.js";

/** What one child fd is connected to, from the parent's side. */
export type StdioSlot = "pipe" | "ignore" | "inherit" | number;

/**
 * What a reaped child cost, from the reap's wait4 rusage. maxRssKiB is the
 * peak RSS of the child or of a descendant it waited for, in KiB (1024
 * bytes, as Node's process.resourceUsage().maxRSS), or null when that peak
 * did not exceed the host's own (docs/spawn.md#what-a-child-cost); for a
 * contained step with the memory controller, the whole tree's peak.
 */
export interface ResourceUsage {
  readonly userCpuMicros: number;
  readonly systemCpuMicros: number;
  readonly maxRssKiB: number | null;
  /**
   * A contained step only (docs/containment.md): the peak memory of its whole
   * tree in bytes (memory.peak), or null where the memory controller is not
   * enabled. The CPU times above then cover the whole tree (cpu.stat).
   */
  readonly memoryPeakBytes?: number | null;
}

/** The engine-neutral ResourceUsage of a raw native exit. */
export function resourceUsageOf(raw: {
  userCpuMicros: number;
  systemCpuMicros: number;
  maxRssKiB?: number | null;
  tree?: RawTreeUsage | undefined;
}): ResourceUsage {
  const tree = raw.tree;
  if (tree === undefined) {
    return {
      userCpuMicros: raw.userCpuMicros,
      systemCpuMicros: raw.systemCpuMicros,
      maxRssKiB: raw.maxRssKiB ?? null,
    };
  }
  // A contained step: its cgroup counted every process of the tree, the
  // leader included (it entered before its exec). Its peak is the tree's
  // (memory.peak), where the memory controller gives one: unlike the leader's
  // rusage it never starts from the host's high-water mark.
  const peak = tree.memoryPeakBytes;
  return {
    userCpuMicros: Math.max(tree.userCpuMicros ?? 0, raw.userCpuMicros),
    systemCpuMicros: Math.max(tree.systemCpuMicros ?? 0, raw.systemCpuMicros),
    maxRssKiB: peak == null ? (raw.maxRssKiB ?? null) : Math.ceil(peak / 1024),
    memoryPeakBytes: peak,
  };
}

/**
 * What the kernel counted against a contained step's limits (its cgroup's
 * pids.events, memory.events and cpu.stat), or undefined for a step without
 * a cgroup.
 */
export function limitEventsOf(raw: { tree?: RawTreeUsage | undefined }): LimitEvents | undefined {
  const tree = raw.tree;
  if (tree === undefined) return undefined;
  return Object.freeze({
    pidsMax: tree.pidsMaxEvents,
    memoryMax: tree.memoryMaxEvents,
    oom: tree.oomEvents,
    oomKill: tree.oomKills,
    cpuThrottledMicros: tree.cpuThrottledMicros,
    cpuThrottledPeriods: tree.cpuThrottledPeriods,
  });
}

export interface EngineExit {
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** null when the engine cannot measure it (the fallback). */
  readonly resourceUsage: ResourceUsage | null;
  /** What the engine captured itself, by slot (see EngineChild.captured). */
  readonly output?: ReadonlyArray<Buffer | null> | undefined;
  /** A step contained in a cgroup: what the kernel counted against its limits. */
  readonly limitEvents?: LimitEvents | undefined;
  /**
   * When the exit happened as far as the engine saw it, on performance.now()'s
   * scale: the native engine's reap, or the deadline keeper's look after an
   * ending's signal (either may be long before JavaScript hears of it on a
   * busy host); the fallback's exit event. Absent: when it was delivered.
   */
  readonly exitedAt?: number | undefined;
}

/** Output the Subprocess wants captured: which pipe slots, and the byte limit of each. */
export interface CaptureRequest {
  readonly slots: readonly number[];
  readonly maxBuffer: number;
}

/** A fully resolved request: absolute file, whole argv, exact envp. */
export interface EngineRequest {
  readonly file: string;
  readonly argv: ReadonlyArray<string | Buffer>;
  /** Σ UTF-8 bytes + NUL of argv, as the exec-size model measured it (validated: no NUL inside). */
  readonly argvBytes?: number | undefined;
  /** The validated environment, in order (frozen and reused when the caller's env was frozen). */
  readonly entries: readonly EnvEntry[];
  readonly cwd: string | undefined;
  readonly stdio: readonly StdioSlot[];
  readonly setsid: boolean;
  readonly setpgroup: boolean;
  /** Set in the child before exec; an engine that cannot apply one refuses the start. */
  readonly controls?: ExecControls | undefined;
  /** Confinement applied in the child before exec; an engine that cannot apply it refuses the start. */
  readonly sandbox?: RawSandbox | undefined;
  /** The child leads a group (setsid or setpgroup) that the watchdog kills when the host ends. */
  readonly cleanup?: boolean | undefined;
  /** An engine may read these slots itself instead of handing out streams. */
  readonly capture?: CaptureRequest | undefined;
  /** Run the child in a cgroup of its own (contain-plan.ts); only the native engine can. */
  readonly contain?: RawContain | undefined;
}

/** A captured slot handed back to the Subprocess (see EngineChild.takeOver). */
export interface TakenOver {
  /** The rest of the output; null when the pipe had already ended. */
  readonly stream: Readable | null;
  /** What the engine read before. */
  readonly bytes: Buffer;
}

export interface EngineChild {
  /** undefined when the start failed and the failure arrives through onExit (fallback). */
  readonly pid: number | undefined;
  /**
   * The parent's end of each "pipe" slot (stdin writable, others readable),
   * else null; also null for the slots in `captured` until they are taken over.
   */
  readonly streams: ReadonlyArray<Readable | Writable | null>;
  /**
   * The slots the engine reads itself: at most maxBuffer bytes each, delivered
   * as `exit.output[slot]`; going over it closes the pipe and calls onOverflow.
   */
  readonly captured: readonly number[];
  /**
   * Stops the engine reading a captured slot and hands over the rest, or
   * returns null when the slot is not captured (any more). May call onExit
   * before it returns.
   */
  takeOver(slot: number): TakenOver | null;
  /** 0 or a negative errno (-ESRCH once the child is gone). */
  kill(signal: number): number;
  /**
   * Signals the child's process group; only used when the child leads one.
   * -ESRCH once the leader has been reaped: from then on the group id may
   * belong to someone else.
   */
  killGroup(signal: number): number;
  /**
   * Begins the run's ending now (deadline-plan.ts phases 2-3: the plan's
   * endSignal, the group's signal at the leader's exit, finalSignal after the
   * grace) unless one has begun, and returns the first ending (one that
   * never began, without a plan or once the run is over).
   */
  endNow(): EndingRecord;
  /**
   * The first ending so far, or null. The engine begins one itself at the
   * plan's timeout (the native engine on a thread of its own, so a busy
   * event loop does not delay it); the Subprocess only learns of it here.
   */
  ending(): EndingRecord | null;
  /**
   * Once the leader is reaped (now, if it is), stops reading the slots the
   * engine captures and delivers the exit with what was read. May call
   * onExit before it returns.
   */
  endCaptureAtExit(): void;
  ref(): void;
  unref(): void;
}

export interface Engine {
  readonly native: boolean;
  /**
   * Starts the child. Throws a Node-style system error when the exec fails
   * synchronously; otherwise calls onExit exactly once, with the exit or an
   * Error (a failed start, for engines that report it asynchronously).
   * onOverflow(slot) reports a captured slot that went over maxBuffer. The
   * engine executes `plan`'s signals (see EngineChild.endNow / ending);
   * without one, no ending ever begins.
   */
  start(
    request: EngineRequest,
    onExit: (exit: EngineExit | Error) => void,
    onOverflow?: (slot: number) => void,
    plan?: DeadlinePlan,
  ): EngineChild;
}
