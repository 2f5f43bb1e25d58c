/**
 * How a run is ended early: the one timeout, abort, kill-grace, maxBuffer and
 * group-kill policy of both `spawn` and `spawnSync`. Both hand the plain
 * numbers of `nativeDeadline` to the addon, which decides nothing itself:
 * for `spawn` its deadline keeper, a thread of its own, begins the timeout's
 * ending and sends every signal (so a busy event loop cannot delay a kill);
 * for `spawnSync` its blocking loop does. The Subprocess only asks for an
 * ending (abort, maxBuffer) and learns what happened (EndingRecord). Where
 * the addon is not loaded, the fallback engine runs the same phases with
 * JavaScript timers (js-ending.ts), which fire only when the loop is free.
 *
 * The phases, for a run whose plan is P:
 *  1. An ending begins at `P.timeoutMs` after the start, on abort, when a
 *     captured stream goes one byte over `P.maxBuffer` (that stream is then
 *     closed), or when a stream given as `input` fails. Only the first ending acts; later ones are only recorded.
 *  2. While the leader has not exited, the ending sends `P.endSignal` to
 *     `P.toGroup ? its process group : the leader`, and, when
 *     `P.groupSignalAtLeaderExit` is not 0, that signal goes to the rest of
 *     the group at the leader's exit, just before its reap (the zombie pins
 *     the group id; after the reap the number may be anyone's).
 *  3. `P.graceMs` after the ending began: `P.finalSignal` to the same target
 *     if the leader is still unreaped, and reading output stops once the
 *     leader is reaped (at once if it is): a process it left behind may hold
 *     the pipes open for ever. Without an ending, output is read to its end.
 *  4. The outcome is named by `endingFailure`: the first ending that counts
 *     (a timeout, abort or input failure counts only if the leader had not exited; output
 *     over maxBuffer always counts), else the leader's own exit.
 *
 * So a leader that exits cleanly while a grandchild holds its stdout is
 * reported with its own exit and the output read until timeout + grace.
 * Pure; total for normalized options.
 */
import { constants } from "node:os";
import type { RawDeadline } from "../native.js";
import type { LimitEvents } from "./contain.js";
import type { FailureReason } from "./spawn-errors.js";

const SIGKILL = constants.signals.SIGKILL;

/** What begins an ending ("input": a stream given as `input` failed, stream-input.ts). */
export type EndingCause = "timeout" | "abort" | "maxBuffer" | "input";

/**
 * A run's first ending as the engine executed it: what began it, whether the
 * leader had not exited yet then (only then does it count), and when the end
 * signal went (epoch ms, fractional; null when none went).
 */
export interface EndingRecord {
  readonly byDeadline: boolean;
  readonly leaderRunning: boolean;
  readonly at: number | null;
}

/** The record of an ending that never began (no plan, or the run was over). */
export const NO_ENDING: EndingRecord = Object.freeze({
  byDeadline: false,
  leaderRunning: false,
  at: null,
});

/** One ending, as it happened: its cause and whether the leader was still unreaped then. */
export interface Ending {
  readonly cause: EndingCause;
  readonly leaderRunning: boolean;
}

export interface DeadlinePlan {
  /** ms after the start at which a timeout ending begins; undefined: never (no timeout, or 0). */
  readonly timeoutMs: number | undefined;
  /** Sent when an ending begins (killSignal). */
  readonly endSignal: number;
  /** Signals go to the child's process group (it leads one), else to the child alone. */
  readonly toGroup: boolean;
  /** ms from an ending's start to finalSignal and to the end of reading output. */
  readonly graceMs: number;
  /** Sent after the grace (SIGKILL). */
  readonly finalSignal: number;
  /** Sent to the rest of the group at the leader's exit once an ending began; 0: none. */
  readonly groupSignalAtLeaderExit: number;
  /** Bytes kept per captured stream; one more begins a "maxBuffer" ending. */
  readonly maxBuffer: number;
}

/** The options a plan is made from (normalized: numbers are finite and >= 0). */
export interface DeadlineOptions {
  readonly timeout: number | undefined;
  readonly killSignal: number;
  readonly killGraceMs: number;
  readonly maxBuffer: number;
  readonly ownGroup: boolean;
}

/** The plan for a run. A timeout of 0 means no timeout (as for child_process). */
export function deadlinePlan(options: DeadlineOptions): DeadlinePlan {
  const timeout = options.timeout;
  return {
    timeoutMs: timeout === undefined || timeout === 0 ? undefined : timeout,
    endSignal: options.killSignal,
    toGroup: options.ownGroup,
    graceMs: options.killGraceMs,
    finalSignal: SIGKILL,
    groupSignalAtLeaderExit: options.ownGroup ? SIGKILL : 0,
    maxBuffer: options.maxBuffer,
  };
}

/** Whether an ending makes the run a failure of its own (phase 4). */
function counts(ending: Ending): boolean {
  return ending.cause === "maxBuffer" || ending.leaderRunning;
}

/**
 * The failure the endings of a run name, in the order they happened, or null
 * when none counts (the leader's own exit then decides).
 */
export function endingFailure(endings: readonly Ending[]): FailureReason | null {
  for (const ending of endings) if (counts(ending)) return ending.cause;
  return null;
}

/**
 * The one rule that decides a run's failure, for spawn and spawnSync alike:
 * an ending that counts; else the OOM killer ended a process of the tree
 * ("oom", whatever the leader's status: exit 0 included); else, for a run
 * that failed (a signal, a non-zero exit), a limit the kernel enforced
 * ("limit": a fork refused at pids.max, the OOM killer invoked), else the
 * signal or the exit. cpu.max throttling and reclaim at memory.max only slow
 * a tree down: they name no failure (docs/containment.md).
 */
export function runFailure(
  endings: readonly Ending[],
  exit: {
    readonly exitCode: number | null;
    readonly signal: string | null;
    readonly limitEvents?: LimitEvents | undefined;
  },
): FailureReason | null {
  const ended = endingFailure(endings);
  if (ended !== null) return ended;
  const events = exit.limitEvents;
  if ((events?.oomKill ?? 0) > 0) return "oom";
  if (exit.signal === null && exit.exitCode === 0) return null;
  if ((events?.pidsMax ?? 0) > 0 || (events?.oom ?? 0) > 0) return "limit";
  return exit.signal !== null ? "signal" : "exit";
}

/**
 * The plan as the addon's blocking loop takes it: whole milliseconds (rounded
 * up, so no deadline comes early), -1 for "never", signal numbers (0: none).
 */

export function nativeDeadline(plan: DeadlinePlan): RawDeadline {
  return {
    timeoutMs: nativeTimeout(plan),
    endSignal: plan.endSignal,
    toGroup: plan.toGroup,
    graceMs: Math.ceil(plan.graceMs),
    finalSignal: plan.finalSignal,
    groupSignalAtExit: plan.groupSignalAtLeaderExit,
    captureLimit: plan.maxBuffer,
  };
}

function nativeTimeout(plan: DeadlinePlan): number {
  return plan.timeoutMs === undefined ? -1 : Math.ceil(plan.timeoutMs);
}

/**
 * One array reused by every spawn: the addon reads it inside the call that
 * is handed it, before any JavaScript runs again. Over a buffer of its own,
 * so reading it natively allocates nothing (a small typed array made with a
 * length lives in V8's heap, and handing it to native code moves it out).
 */
const DEADLINE_NUMBERS = new Float64Array(new ArrayBuffer(6 * Float64Array.BYTES_PER_ELEMENT));

/**
 * The same plan as the addon's positional spawn takes it (native/deadline_args.h):
 * [timeoutMs, endSignal, toGroup (0 or 1), graceMs, finalSignal,
 * groupSignalAtExit] in one Float64Array, read natively in one call (the
 * capture limit travels with the capture request). The array is shared:
 * pass it to the addon at once.
 */
export function nativeDeadlineNumbers(plan: DeadlinePlan): Float64Array {
  const numbers = DEADLINE_NUMBERS;
  numbers[0] = nativeTimeout(plan);
  numbers[1] = plan.endSignal;
  numbers[2] = plan.toGroup ? 1 : 0;
  numbers[3] = Math.ceil(plan.graceMs);
  numbers[4] = plan.finalSignal;
  numbers[5] = plan.groupSignalAtLeaderExit;
  return numbers;
}
