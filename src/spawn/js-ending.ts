/**
 * The deadline plan's phases 2-3 (deadline-plan.ts) executed with JavaScript
 * timers: for the child_process fallback engine, and for an addon built
 * before the deadline keeper. A JavaScript timer fires only when the event
 * loop is free, so here a host that is busy when the timeout falls due ends
 * the step late (docs/fallback.md); the native engine's keeper, a thread of
 * the addon's own, does not wait for the loop.
 */

import { constants } from "node:os";
import { performance } from "node:perf_hooks";
import type { DeadlinePlan, EndingRecord } from "./deadline-plan.js";
import { exitedUnreaped } from "./leader-exited.js";

const ESRCH = -constants.errno.ESRCH;

/** The signals an engine can send; -ESRCH once the leader is gone. */
export interface EndingTarget {
  /** The leader's pid while it is unreaped (leader-exited.ts reads its state). */
  readonly pid?: number | undefined;
  kill(signal: number): number;
  killGroup(signal: number): number;
  /** Asks for `signal` to reach the group at the leader's exit, where the engine can. */
  killGroupAtExit?(signal: number): number;
}

export class JsEnding {
  readonly #plan: DeadlinePlan;
  readonly #target: EndingTarget;
  #record: EndingRecord | null = null;
  #timer: NodeJS.Timeout | undefined;
  #graceTimer: NodeJS.Timeout | undefined;

  /** Arms the plan's timeout now (unref'd: it never keeps the host alive by itself). */
  constructor(plan: DeadlinePlan, target: EndingTarget) {
    this.#plan = plan;
    this.#target = target;
    if (plan.timeoutMs !== undefined) {
      this.#timer = setTimeout(() => this.#begin(true), plan.timeoutMs);
      this.#timer.unref();
    }
  }

  /** Begins the ending now unless one has begun; the first ending. */
  endNow(): EndingRecord {
    return this.#begin(false);
  }

  /** The first ending so far, or null. */
  ending(): EndingRecord | null {
    return this.#record;
  }

  /** The leader is reaped: nothing more is sent. */
  stop(): void {
    clearTimeout(this.#timer);
    clearTimeout(this.#graceTimer);
  }

  #send(signal: number): number {
    return this.#plan.toGroup ? this.#target.killGroup(signal) : this.#target.kill(signal);
  }

  #begin(byDeadline: boolean): EndingRecord {
    if (this.#record !== null) return this.#record;
    clearTimeout(this.#timer);
    const plan = this.#plan;
    // A leader that exited before this signal did not end by it (leader-exited.ts);
    // its group is still signalled, for what it left running.
    const exitedBefore = exitedUnreaped(this.#target.pid);
    const leaderRunning = this.#send(plan.endSignal) !== ESRCH && !exitedBefore;
    this.#record = {
      byDeadline,
      leaderRunning,
      at: leaderRunning ? performance.timeOrigin + performance.now() : null,
    };
    if (leaderRunning) {
      if (plan.groupSignalAtLeaderExit !== 0) {
        this.#target.killGroupAtExit?.(plan.groupSignalAtLeaderExit);
      }
      this.#graceTimer = setTimeout(() => this.#send(plan.finalSignal), plan.graceMs);
      this.#graceTimer.unref();
    }
    return this.#record;
  }
}
