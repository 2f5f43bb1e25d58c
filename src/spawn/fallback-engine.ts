/**
 * The fallback engine: `child_process.spawn` with the same environment
 * object, used when the addon is off or could not load (see docs/fallback.md).
 *
 * What it cannot do, and therefore refuses instead of approximating: argv or
 * env bytes that are not valid UTF-8, and repeated env names (Node's `env`
 * is an object). It reports no resource usage, kills by pid (not pidfd), and
 * cannot close inherited fds that lack close-on-exec. A process group is
 * always a new session (`detached`). Of the exec controls it applies `uid`
 * and `gid` (child_process drops the supplementary groups with them) and
 * refuses every other one. Warns once per process.
 * always a new session (`detached`). With `cleanup`, the group is released
 * from the watchdog just after Node reaped the leader, not before (see
 * docs/spawn.md, "When the host dies"). Warns once per process.
 */
import { type Buffer, isUtf8 } from "node:buffer";
import { type ChildProcess, spawn as spawnChild } from "node:child_process";
import { constants } from "node:os";
import { performance } from "node:perf_hooks";
import { displayName, systemError } from "../errors.js";
import { logger } from "../log.js";
import { type DeadlinePlan, type EndingRecord, NO_ENDING } from "./deadline-plan.js";
import type { Engine, EngineChild, EngineExit, EngineRequest } from "./engine.js";
import type { ExecControls } from "./exec-controls.js";
import { JsEnding } from "./js-ending.js";
import { FallbackWatchdog } from "./watchdog.js";

let warned = false;
let watchdog: FallbackWatchdog | undefined;

/** The fallback cannot represent this request without changing bytes. */
export class FallbackUnsupportedError extends TypeError {
  override readonly name = "FallbackUnsupportedError";
  readonly code = "ERR_EXACTSPAWN_FALLBACK_UNSUPPORTED";
}

/** The text child_process needs; refuses bytes that are not UTF-8 (they would change). */
export function utf8(value: string | Buffer, what: string): string {
  if (typeof value === "string") return value;
  if (!isUtf8(value)) {
    throw new FallbackUnsupportedError(
      `${what} is not valid UTF-8; only the native engine passes such bytes exactly`,
    );
  }
  return value.toString("utf8");
}

/** The ids child_process can apply; throws for any control it cannot. */
export function fallbackIds(controls: ExecControls | undefined): { uid?: number; gid?: number } {
  if (controls === undefined) return {};
  const refuse = (what: string): never => {
    throw new FallbackUnsupportedError(
      `options.${what} needs the native engine; child_process cannot set it`,
    );
  };
  const ids = controls.uid !== undefined || controls.gid !== undefined;
  // libuv calls setgroups(0) whenever it sets uid or gid: only "no groups" is possible.
  if (controls.groups !== undefined && (controls.groups.length > 0 || !ids)) refuse("groups");
  if (controls.umask !== undefined) refuse("umask");
  if (controls.rlimits.length > 0) refuse("rlimits");
  if (controls.nice !== undefined) refuse("nice");
  if (controls.noNewPrivileges) refuse("noNewPrivileges");
  if (controls.parentDeathSignal !== undefined) refuse("parentDeathSignal");
  const out: { uid?: number; gid?: number } = {};
  if (controls.uid !== undefined) out.uid = controls.uid;
  if (controls.gid !== undefined) out.gid = controls.gid;
  return out;
}

/** The request's environment as the object child_process takes; refuses what it cannot pass exactly. */
export function envObject(request: EngineRequest): Record<string, string> {
  const env: Record<string, string> = Object.create(null);
  for (const entry of request.entries) {
    if (Object.hasOwn(env, entry.name)) {
      throw new FallbackUnsupportedError(
        `environment repeats ${displayName(entry.name)}; child_process cannot pass duplicates`,
      );
    }
    const value =
      entry.raw !== undefined ? entry.raw.subarray(entry.raw.indexOf(0x3d) + 1) : entry.value;
    env[entry.name] = utf8(value, `the value of ${displayName(entry.name)}`);
  }
  return env;
}

class FallbackChild implements EngineChild {
  readonly pid: number | undefined;
  readonly streams: EngineChild["streams"];
  readonly captured: readonly number[] = [];
  readonly #child: ChildProcess;
  /**
   * The plan with JavaScript timers: the deadline waits for a free event
   * loop here (docs/fallback.md), and nothing reaches the group at the
   * leader's exit (child_process reaps before JavaScript hears of it).
   */
  readonly #ending: JsEnding | undefined;
  constructor(child: ChildProcess, plan: DeadlinePlan | undefined) {
    this.#child = child;
    this.pid = child.pid;
    if (plan !== undefined) {
      const ending = new JsEnding(plan, this);
      this.#ending = ending;
      child.once("exit", () => ending.stop());
    }
    // On EMFILE/ENFILE child_process gives up before it sets up stdio (and,
    // in Node 20, leaves the pipes it made open); the error event follows.
    this.streams = child.stdio === undefined ? [] : child.stdio.map((s) => s ?? null);
  }
  kill(signal: number): number {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) {
      return -constants.errno.ESRCH;
    }
    return this.#child.kill(signal) ? 0 : -constants.errno.ESRCH;
  }
  killGroup(signal: number): number {
    // libuv reaps and sets exitCode in the same loop turn: once it is set the
    // group id may have been reused, and no JavaScript ran in between.
    if (this.pid === undefined || this.#exited()) return -constants.errno.ESRCH;
    try {
      process.kill(-this.pid, signal);
      return 0;
    } catch (error) {
      return (error as { errno?: number }).errno ?? -constants.errno.ESRCH;
    }
  }
  endNow(): EndingRecord {
    return this.#ending?.endNow() ?? NO_ENDING;
  }
  ending(): EndingRecord | null {
    return this.#ending?.ending() ?? null;
  }
  /** Nothing is captured by the engine here; the streams belong to the Subprocess. */
  endCaptureAtExit(): void {}
  #exited(): boolean {
    return this.#child.exitCode !== null || this.#child.signalCode !== null;
  }
  ref(): void {
    this.#child.ref();
  }
  unref(): void {
    this.#child.unref();
  }
  takeOver(): null {
    return null;
  }
}

export function fallbackEngine(reason: string | undefined): Engine {
  return {
    native: false,
    start(
      request: EngineRequest,
      onExit: (exit: EngineExit | Error) => void,
      _onOverflow?: (slot: number) => void,
      plan?: DeadlinePlan,
    ): EngineChild {
      // A fallback chosen on purpose (EXACTSPAWN_NATIVE=0, disableNative()) is
      // a warning at the first spawn; an addon that failed to load was already
      // told once, at `error`, by the loader (src/native.ts): never twice.
      if (!warned && reason?.startsWith("disabled by ") === true) {
        warned = true;
        logger().warn(
          { reason },
          "exactspawn: native addon not in use, spawning through child_process (see docs/fallback.md)",
        );
      }
      if (request.sandbox !== undefined) {
        throw new FallbackUnsupportedError("options.sandbox needs the native engine");
      }
      // contain-plan.ts never asks this engine for containment; refuse rather than ignore.
      if (request.contain !== undefined) {
        throw new FallbackUnsupportedError("options.contain needs the native engine");
      }
      const ids = fallbackIds(request.controls);
      const argv = request.argv.map((arg, i) => utf8(arg, `argv[${i}]`));
      const env = envObject(request);
      // Started (and checked) before the child, so a watchdog that cannot run refuses the spawn.
      let guard: FallbackWatchdog | undefined;
      if (request.cleanup === true) {
        watchdog ??= new FallbackWatchdog();
        guard = watchdog;
        guard.ensureRunning();
      }
      const child = spawnChild(request.file, argv.slice(1), {
        argv0: argv[0] ?? request.file,
        env,
        cwd: request.cwd,
        stdio: request.stdio.map((slot) => slot) as ("pipe" | "ignore" | "inherit" | number)[],
        detached: request.setsid || request.setpgroup,
        shell: false,
        ...ids,
      });
      if (guard !== undefined && child.pid !== undefined) guard.guard(child.pid);
      let reported = false;
      child.once("error", (error: NodeJS.ErrnoException) => {
        if (reported || child.pid !== undefined) return;
        reported = true;
        const failure = systemError(error.errno ?? -constants.errno.EIO, "spawn", request.file);
        failure.cause = error;
        onExit(failure);
      });
      child.once("exit", (exitCode, signal) => {
        // Node has reaped the leader already: see docs/spawn.md for this window.
        if (guard !== undefined && child.pid !== undefined) guard.release(child.pid);
        if (reported) return;
        reported = true;
        // child_process reaps on this thread: its exit event is the earliest the exit is known.
        onExit({ exitCode, signal, resourceUsage: null, exitedAt: performance.now() });
      });
      return new FallbackChild(child, plan);
    },
  };
}
