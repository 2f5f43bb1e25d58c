/**
 * The native engine: posix_spawn through the addon, which also makes the
 * pipes (pipe2(O_CLOEXEC)) and closes the child's ends, and exit through its
 * pidfd watch. Captured stdout/stderr are read by the addon itself on this
 * thread's event loop and arrive with the exit, so the common run never
 * builds a stream; the first access to such a stream takes the pipe over
 * and wraps it like every other parent end (pipeEnd below).
 *
 * Every spawn goes through the addon's own child path (clone + execve), the
 * cheaper of the two exact start paths in parent CPU (docs/performance.md).
 * EXACTSPAWN_CHILD_PATH=posix_spawn, read when the engine is made (at the
 * first spawn), sends every spawn without exec controls through
 * posix_spawn(3) instead: the test suites use it to prove both paths with
 * the same tests. A request with exec controls always takes the child path.
 */
import { closeSync } from "node:fs";
import { Socket } from "node:net";
import { constants } from "node:os";
import { Readable, type Writable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { packedEnvp, packStrings } from "../env/env-input.js";
import type {
  NativeBinding,
  RawChildHandle,
  RawEndingRecord,
  RawExecControls,
  RawSpawnMore,
  RawSpawnOptions,
  RawTreeUsage,
} from "../native.js";
import { explainHelperFailure } from "../native.js";
import {
  type DeadlinePlan,
  type EndingRecord,
  NO_ENDING,
  nativeDeadlineNumbers,
} from "./deadline-plan.js";
import {
  type Engine,
  type EngineChild,
  type EngineExit,
  type EngineRequest,
  limitEventsOf,
  resourceUsageOf,
  type StdioSlot,
  type TakenOver,
} from "./engine.js";
import type { ExecControls } from "./exec-controls.js";
import { JsEnding } from "./js-ending.js";
import { epochOfMonotonic, performanceOfMonotonic } from "./monotonic-time.js";
import { WATCHDOG_PROGRAM } from "./watchdog.js";

type SpawnCapable = NativeBinding & Required<Pick<NativeBinding, "spawn">>;

export function canSpawnNatively(binding: NativeBinding | null): binding is SpawnCapable {
  return binding !== null && typeof binding.spawn === "function";
}

/** The addon's stdio value for a new pipe. */
const PIPE = -2;
const NONE: readonly number[] = [];
const ENOSYS = constants.errno.ENOSYS;

/** Bun never delivers data from a pipe wrapped in `net.Socket({ fd })`. */
const BUN = process.versions["bun"] !== undefined;

/** What Bun offers to read an fd (its own pipe reader, which waits for a drained pipe). */
interface BunFiles {
  readonly Bun: { file(fd: number): { stream(): WebReadableStream<Uint8Array> } };
}

/**
 * The stream over a parent's pipe end (slot 0 writes to the child, the others
 * read from it); it owns the fd. `net.Socket({ fd })` under Node and Deno (fs
 * streams there would hold a libuv threadpool thread per read under Node, and
 * fail on a pipe fd under Deno). Under Bun, which never delivers data from a
 * pipe wrapped in a socket, and whose fs streams fail with EAGAIN on the
 * non-blocking ends the addon captures through, a read end is Bun's own file
 * stream, and `close` closes the fd once the stream is done (Bun's reader
 * leaves it open); writes still go through `net.Socket`.
 */
export function pipeEnd(
  fd: number,
  slot: number,
  close: (fd: number) => void,
  bun = BUN,
): Readable | Writable {
  if (slot === 0) return new Socket({ fd, readable: false, writable: true });
  if (!bun) return new Socket({ fd, readable: true, writable: false });
  const stream = Readable.fromWeb((globalThis as unknown as BunFiles).Bun.file(fd).stream());
  stream.once("close", () => close(fd));
  return stream;
}

/** Frozen all-null stream lists, by length: a child with no parent ends shares one. */
const NO_STREAMS: (readonly null[])[] = [];

function noStreams(count: number): readonly null[] {
  let streams = NO_STREAMS[count];
  if (streams === undefined) {
    const nulls: null[] = [];
    for (let i = 0; i < count; i++) nulls.push(null);
    streams = Object.freeze(nulls);
    NO_STREAMS[count] = streams;
  }
  return streams;
}

class NativeChild implements EngineChild {
  readonly pid: number;
  readonly streams: ReadonlyArray<Readable | Writable | null>;
  readonly captured: readonly number[];
  readonly #handle: RawChildHandle;
  /** Only for an addon built before the deadline keeper: the plan run with JavaScript timers. */
  readonly #jsEnding: JsEnding | undefined;
  readonly #close: (fd: number) => void;
  /** An ending may have begun: the plan has a timeout, or endNow() was called. */
  #mayHaveEnded: boolean;
  constructor(
    handle: RawChildHandle,
    stdioCount: number,
    captured: readonly number[],
    plan: DeadlinePlan | undefined,
    close: (fd: number) => void,
  ) {
    this.#handle = handle;
    this.#close = close;
    this.#mayHaveEnded = plan !== undefined && plan.timeoutMs !== undefined;
    this.#jsEnding =
      plan === undefined || typeof handle.endNow === "function"
        ? undefined
        : new JsEnding(plan, this);
    this.pid = handle.pid;
    this.captured = captured;
    const fds = handle.fds;
    this.streams =
      fds === undefined
        ? noStreams(stdioCount)
        : fds.map((fd, slot) => (fd < 0 ? null : pipeEnd(fd, slot, close)));
  }
  kill(signal: number): number {
    return this.#handle.kill(signal);
  }
  killGroup(signal: number): number {
    return this.#handle.killGroup(signal);
  }
  killGroupAtExit(signal: number): number {
    return this.#handle.killGroupAtExit?.(signal) ?? -ENOSYS;
  }
  endNow(): EndingRecord {
    if (this.#jsEnding !== undefined) return this.#jsEnding.endNow();
    this.#mayHaveEnded = true;
    return onEpochScale(this.#handle.endNow?.() ?? null) ?? NO_ENDING;
  }
  ending(): EndingRecord | null {
    if (this.#jsEnding !== undefined) return this.#jsEnding.ending();
    // Without a timeout only endNow() begins an ending: nothing to ask the addon.
    if (!this.#mayHaveEnded) return null;
    return onEpochScale(this.#handle.ending?.() ?? null);
  }
  /** The exit arrived: an ending run in JavaScript sends nothing more. */
  exited(): void {
    this.#jsEnding?.stop();
  }
  endCaptureAtExit(): void {
    this.#handle.endCaptureAtExit?.();
  }
  ref(): void {
    this.#handle.ref();
  }
  unref(): void {
    this.#handle.unref();
  }
  takeOver(slot: number): TakenOver | null {
    const taken = this.#handle.takeOver?.(slot) ?? null;
    if (taken === null) return null;
    const stream = taken.fd < 0 ? null : (pipeEnd(taken.fd, slot, this.#close) as Readable);
    return { stream, bytes: taken.bytes };
  }
}

/** The addon's record with its time on the results' scale (monotonic-time.ts). */
function onEpochScale(record: RawEndingRecord | null): EndingRecord | null {
  if (record === null || record.at === null) return record;
  return { ...record, at: epochOfMonotonic(record.at) };
}

/** The addon's stdio arrays of frozen stdio lists (the shared ones of spawn-options.ts). */
const fdsOf = new WeakMap<readonly StdioSlot[], readonly number[]>();

/**
 * The addon's stdio array: an fd per slot, -1 for /dev/null, -2 for a new
 * pipe. Made once per frozen stdio list (the addon only reads it).
 */
export function stdioFds(request: EngineRequest): readonly number[] {
  const stdio = request.stdio;
  const known = fdsOf.get(stdio);
  if (known !== undefined) return known;
  const fds: number[] = [];
  for (let i = 0; i < stdio.length; i++) {
    const slot = stdio[i];
    fds.push(slot === "pipe" ? PIPE : slot === "ignore" ? -1 : slot === "inherit" ? i : slot!);
  }
  if (!Object.isFrozen(stdio)) return fds;
  Object.freeze(fds);
  fdsOf.set(stdio, fds);
  return fds;
}

/**
 * The request's argv and envp as the addon takes them: each one packed
 * Buffer with its count. The argv bytes may be a reused Buffer: pass them
 * to the addon at once (both engines do, in the same call).
 */
export function packedArgs(
  request: EngineRequest,
): Pick<RawSpawnOptions, "argv" | "argvCount" | "envp" | "envpCount"> {
  const argv = packStrings(request.argv, "spawn: argv", request.argvBytes);
  const envp = packedEnvp(request.entries);
  return { argv: argv.bytes, argvCount: argv.count, envp: envp.bytes, envpCount: envp.count };
}

/**
 * The addon reads each control by name through the prototype chain: the
 * objects it gets have none, so a control this spawn does not set is never
 * one inherited from a polluted Object.prototype (`uid`, `rlimits`…).
 */
const NO_CONTROLS: RawExecControls = Object.freeze(Object.create(null) as RawExecControls);

/**
 * EXACTSPAWN_CHILD_PATH=posix_spawn: spawns without exec controls of an
 * engine made now start through posix_spawn(3) rather than the child path.
 */
export function posixSpawnAsked(): boolean {
  return process.env["EXACTSPAWN_CHILD_PATH"] === "posix_spawn";
}

/**
 * The addon's `controls` for a request: its controls, else an empty set (the
 * child path, the default), else absent when posix_spawn was asked for.
 */
export function nativeControls(
  request: EngineRequest,
  posixSpawn: boolean,
): RawExecControls | undefined {
  if (request.controls !== undefined) return rawControls(request.controls);
  return posixSpawn ? undefined : NO_CONTROLS;
}

function rawControls(controls: ExecControls): RawExecControls {
  const raw: RawExecControls = Object.create(null);
  if (controls.uid !== undefined) raw.uid = controls.uid;
  if (controls.gid !== undefined) raw.gid = controls.gid;
  if (controls.groups !== undefined) raw.groups = controls.groups;
  if (controls.umask !== undefined) raw.umask = controls.umask;
  if (controls.rlimits.length > 0) raw.rlimits = controls.rlimits;
  if (controls.nice !== undefined) raw.nice = controls.nice;
  if (controls.noNewPrivileges) raw.noNewPrivileges = true;
  if (controls.parentDeathSignal !== undefined) raw.parentDeathSignal = controls.parentDeathSignal;
  return raw;
}

/** Rethrows on the next tick: no exception travels back into the addon's loop callback. */
function rethrowLater(error: unknown): void {
  process.nextTick(() => {
    throw error;
  });
}

/** Starts the addon's watchdog once per engine (the addon replaces one that died). */
export function watchdogStarter(binding: NativeBinding): () => void {
  let started = false;
  return () => {
    if (started) return;
    if (typeof binding.startWatchdog !== "function") {
      throw new Error(
        "exactspawn: the loaded addon predates the cleanup option; rebuild it (npm run build:native)",
      );
    }
    binding.startWatchdog(WATCHDOG_PROGRAM);
    started = true;
  };
}

/** close(2) for an fd no Node stream owns: the addon's (fs.closeSync warns in workers), else fs. */
function fdCloser(binding: NativeBinding): (fd: number) => void {
  const closeFd = binding.closeFd;
  return closeFd === undefined ? (fd) => closeSync(fd) : (fd) => void closeFd(fd);
}

/** The addon's spawn flag bits (native/spawn_args.h). */
const SETSID = 1;
const SETPGROUP = 2;
const POSIX_SPAWN = 4;

/** The flags of a request: its session and group, and posix_spawn when asked for. */
function spawnFlags(request: EngineRequest, posixSpawn: boolean): number {
  return (
    (request.setsid ? SETSID : 0) |
    (request.setpgroup ? SETPGROUP : 0) |
    (posixSpawn ? POSIX_SPAWN : 0)
  );
}

/** The exit the addon delivers as arguments (native/child_watch.h), as the engine reports it. */
function exitOf(
  exitCode: number | null,
  signal: string | null,
  userCpuMicros: number,
  systemCpuMicros: number,
  maxRssKiB: number | null,
  output: ReadonlyArray<Buffer | null> | undefined,
  tree: RawTreeUsage | undefined,
  exitedAtMonotonic: number | null | undefined,
): EngineExit {
  const exitedAt =
    exitedAtMonotonic == null ? undefined : performanceOfMonotonic(exitedAtMonotonic);
  if (tree === undefined) {
    return {
      exitCode,
      signal,
      resourceUsage: { userCpuMicros, systemCpuMicros, maxRssKiB },
      output,
      exitedAt,
    };
  }
  const raw = { userCpuMicros, systemCpuMicros, maxRssKiB, tree };
  return {
    exitCode,
    signal,
    resourceUsage: resourceUsageOf(raw),
    output,
    limitEvents: limitEventsOf(raw),
    exitedAt,
  };
}

/**
 * The rarely given part of a spawn (the positional call's last argument), or
 * undefined for a plain spawn: nothing to build or read.
 */
function spawnMore(
  request: EngineRequest,
  captured: readonly number[],
  onOverflow: ((slot: number) => void) | undefined,
): RawSpawnMore | undefined {
  if (
    captured.length === 0 &&
    request.controls === undefined &&
    request.sandbox === undefined &&
    request.cleanup !== true &&
    request.contain === undefined
  ) {
    return undefined;
  }
  return {
    capture: captured.length > 0 ? captured : undefined,
    captureLimit: captured.length > 0 ? request.capture!.maxBuffer : undefined,
    onOverflow:
      captured.length > 0
        ? (slot) => {
            try {
              onOverflow?.(slot);
            } catch (error) {
              rethrowLater(error);
            }
          }
        : undefined,
    controls: request.controls === undefined ? undefined : rawControls(request.controls),
    sandbox: request.sandbox,
    cleanup: request.cleanup === true ? true : undefined,
    contain: request.contain,
  };
}

export function nativeEngine(binding: SpawnCapable): Engine {
  const posixSpawn = posixSpawnAsked();
  const close = fdCloser(binding);
  const startWatchdog = watchdogStarter(binding);
  return {
    native: true,
    start(
      request: EngineRequest,
      onExit: (exit: EngineExit | Error) => void,
      onOverflow?: (slot: number) => void,
      plan?: DeadlinePlan,
    ): EngineChild {
      // A contained step's cgroup is registered with the watchdog too.
      if (request.cleanup === true || request.contain !== undefined) startWatchdog();
      const capture = request.capture;
      const captured = capture !== undefined && capture.slots.length > 0 ? capture.slots : NONE;
      // Assigned before the exit can arrive (it never arrives inside spawn()).
      let child: NativeChild | undefined;
      const argv = packStrings(request.argv, "spawn: argv", request.argvBytes);
      const envp = packedEnvp(request.entries);
      let handle: RawChildHandle;
      try {
        handle = binding.spawn(
          request.file,
          argv.bytes,
          argv.count,
          envp.bytes,
          envp.count,
          request.cwd,
          stdioFds(request),
          spawnFlags(request, posixSpawn),
          (exitCode, signal, userCpuMicros, systemCpuMicros, maxRssKiB, output, tree, exitedAt) => {
            try {
              child?.exited();
              onExit(
                exitCode instanceof Error
                  ? explainHelperFailure(exitCode, binding)
                  : exitOf(
                      exitCode,
                      signal!,
                      userCpuMicros!,
                      systemCpuMicros!,
                      maxRssKiB!,
                      output,
                      tree,
                      exitedAt,
                    ),
              );
            } catch (error) {
              rethrowLater(error);
            }
          },
          plan === undefined ? undefined : nativeDeadlineNumbers(plan),
          spawnMore(request, captured, onOverflow),
        );
      } catch (error) {
        throw explainHelperFailure(error, binding);
      }
      child = new NativeChild(handle, request.stdio.length, captured, plan, close);
      return child;
    },
  };
}
