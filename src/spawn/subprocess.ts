/**
 * The object `spawn` returns: a running child, its streams, and its outcome.
 *
 * A Subprocess is awaitable (it is a thenable over `.result`). The result
 * settles once the child has exited and every captured stream has closed.
 * Exec failures reject with the Node-style system error (syscall "chdir"
 * and the cwd as path when the cwd was the cause: explainCwd); run failures
 * (non-zero exit, signal, timeout, abort, maxBuffer) reject with
 * SubprocessError unless `reject: false`. The promise is created on first
 * use, so a subprocess nobody awaits never produces an unhandled rejection.
 */
import { Buffer } from "node:buffer";
import { performance } from "node:perf_hooks";
import { Readable, type Writable } from "node:stream";
import { type ContainedReport, containedReport } from "./contain.js";
import {
  type DeadlinePlan,
  deadlinePlan,
  type Ending,
  type EndingCause,
  type EndingRecord,
  endingFailure,
  runFailure,
} from "./deadline-plan.js";
import type { Engine, EngineChild, EngineExit, EngineRequest, ResourceUsage } from "./engine.js";
import { streamLines } from "./line-iterator.js";
import { OutputCapture } from "./output-capture.js";
import { signalNumber } from "./signals.js";
import { type FailureReason, SubprocessError } from "./spawn-errors.js";
import type { NormalizedOptions } from "./spawn-options.js";
import { explainCwd } from "./spawn-request.js";
import { feedInput, StreamInput } from "./stream-input.js";

/**
 * A run's outcome. spawn types stdout/stderr from its options (ResultOf in
 * output-type.ts): string, Buffer, or null for a stream not captured.
 */
export interface SpawnResult<Stdout = string | Buffer | null, Stderr = Stdout> {
  /**
   * The child's pid; undefined only for a run that never started because its
   * `signal` was aborted before the spawn (`failure: "abort"`, with
   * `reject: false`): no number, so no code can signal a pid that was never
   * this run's (0 and -1 would reach the host's group, or every process).
   */
  readonly pid: number | undefined;
  /** The exit status, or null when a signal ended the child. */
  readonly exitCode: number | null;
  /** "SIGTERM" etc. when a signal ended the child, else null. */
  readonly signal: string | null;
  /** Captured output (see `encoding`), or null when the stream was not a captured pipe. */
  readonly stdout: Stdout;
  readonly stderr: Stderr;
  /**
   * From just before the spawn to the child's exit, both as they happened:
   * on the native engine the exit's time is taken off the JavaScript thread
   * when an ending signalled the child, so a busy host's result is not late
   * by its busy time (docs/spawn.md#the-subprocess-and-its-result).
   */
  readonly durationMs: number;
  /** The child's CPU time from wait4(2); null on the fallback engine. */
  readonly resourceUsage: ResourceUsage | null;
  /** Whether the native engine ran the child. */
  readonly native: boolean;
  /** The containment applied (docs/containment.md), or null when the step was not contained. */
  readonly contained: ContainedReport | null;
  /** Why the run counts as failed (only seen with `reject: false`), else null. */
  readonly failure: FailureReason | null;
  /**
   * When a timeout, abort or maxBuffer sent the child its killSignal (epoch
   * ms, fractional, as `performance.timeOrigin + performance.now()`), else
   * null. On the native engine a timeout's signal is sent by a thread of the
   * addon's own, so this is on time even when the host's event loop was busy
   * and the result itself arrived late.
   */
  readonly killedAt: number | null;
}

/** Policy the Subprocess applies around the engine: the run options, plus what spawn derived. */
export type RunPolicy = Pick<
  NormalizedOptions,
  | "encoding"
  | "buffer"
  | "maxBuffer"
  | "timeout"
  | "killSignal"
  | "killGraceMs"
  | "signal"
  | "reject"
  | "input"
  | "ref"
> & {
  readonly ownGroup: boolean;
  /** What containment the engine applies (null or absent: none). */
  readonly contained?: ContainedReport | null;
};

type Outcome = { ok: true; value: SpawnResult } | { ok: false; error: unknown };

const NONE: readonly number[] = [];
/** A timeout the engine never began because the leader had exited before it. */
const LEADER_GONE: EndingRecord = Object.freeze({
  byDeadline: true,
  leaderRunning: false,
  at: null,
});
const EMPTY = Buffer.alloc(0);

function argText(arg: string | Buffer): string {
  return typeof arg === "string" ? arg : arg.toString("utf8");
}

/**
 * The lines of a child that never started: none; the iteration rejects with
 * the spawn error, or ends when the result resolves (aborted before the
 * start, with `reject: false`).
 */
async function* rejectedLines(result: Promise<unknown>): AsyncGenerator<string, void, undefined> {
  await result;
  yield* [];
}

/** A readable stream of `bytes` and then its end: a pipe the engine read to the end. */
function replayStream(bytes: Buffer | null | undefined): Readable {
  const stream = new Readable({ read() {} });
  if (bytes != null && bytes.length > 0) stream.push(bytes);
  stream.push(null);
  return stream;
}

export class Subprocess<R extends SpawnResult = SpawnResult> implements PromiseLike<R> {
  /** undefined when the child never started. */
  readonly pid: number | undefined;
  readonly native: boolean;

  readonly #policy: RunPolicy;
  /** undefined when the spawn failed before a request existed (see spawn.ts failedBeforeStart). */
  readonly #request: EngineRequest | undefined;
  readonly #child: EngineChild | undefined;
  readonly #start: number;
  /**
   * Parent ends by slot; a slot the engine captures stays null until it is
   * taken over. The engine's own list until then (copied on the first write).
   */
  #streams: ReadonlyArray<Readable | Writable | null>;
  /** What `stdout`/`stderr`/`stdio` give for a captured slot: a view of its capture, made once. */
  readonly #given: (Readable | undefined)[] = [];
  readonly #captures: (OutputCapture | undefined)[] = [];
  /** Captured slots still read by the engine (their bytes come with the exit). */
  #engineCaptured: readonly number[] = NONE;
  /** What the engine captured, by slot, once the exit arrived. */
  #engineOutput: ReadonlyArray<Buffer | null> | undefined;
  #pending = 1;
  #unrefed = false;
  #exit: EngineExit | undefined;
  /** When the child exited, on performance.now()'s scale (EngineExit.exitedAt). */
  #exitedAt = 0;
  #outcome: Outcome | undefined;
  #promise: Promise<SpawnResult> | undefined;
  #resolve: ((value: SpawnResult) => void) | undefined;
  #reject: ((error: unknown) => void) | undefined;
  /** When and how the run is ended early (deadline-plan.ts: spawnSync follows the same plan). */
  readonly #plan: DeadlinePlan;
  /** The endings so far, in order (named by endingFailure). */
  readonly #endings: Ending[] = [];
  /** A timeout, abort or maxBuffer has started ending the run (the engine's first ending). */
  #terminating = false;
  /** The wait before looking again for the engine's timeout ending (1, 2, 4 … 100 ms). */
  #lookAgainMs = 0.5;
  /** The timeout is among #endings (the engine's deadline may have begun the first ending). */
  #timeoutSeen = false;
  /** The kill grace has passed: output still open once the leader is reaped is cut off. */
  #endCapture = false;
  /** The first ending found the leader exited: later endings do not count either. */
  #leaderGone = false;
  /** When the first ending's signal went (EndingRecord.at). */
  #killedAt: number | null = null;
  #killCause: unknown;
  #timer: NodeJS.Timeout | undefined;
  #graceTimer: NodeJS.Timeout | undefined;
  #onAbort: (() => void) | undefined;

  constructor(engine: Engine, request: EngineRequest, policy: RunPolicy) {
    this.#policy = policy;
    this.#plan = deadlinePlan(policy);
    this.#request = request;
    this.native = engine.native;
    this.#start = performance.now();
    if (policy.signal?.aborted) {
      this.pid = undefined;
      this.#streams = [];
      this.#child = undefined;
      this.#endings.push({ cause: "abort", leaderRunning: true });
      this.#killCause = policy.signal.reason;
      // As an abort while running: rejects, or with reject: false resolves
      // as an abort (the ordinary race of a task taken off a queue just
      // before its abort), with no output and no exit.
      this.#settle(
        policy.reject
          ? { ok: false, error: this.#failure("abort", null, null) }
          : { ok: true, value: this.#notStarted(request) },
      );
      return;
    }
    let child: EngineChild;
    try {
      child = engine.start(
        request,
        (exit) => this.#onExit(exit),
        // Only a run whose output the engine captures can go over maxBuffer there.
        request?.capture === undefined ? undefined : () => this.#terminate("maxBuffer", undefined),
        this.#plan,
      );
    } catch (error) {
      this.pid = undefined;
      this.#streams = [];
      this.#child = undefined;
      this.#settle({ ok: false, error: explainCwd(error, this.#request?.cwd) });
      return;
    }
    this.#child = child;
    this.pid = child.pid;
    this.#streams = child.streams;
    this.#engineCaptured = child.captured;

    const stdin = this.#streams[0] as Writable | null | undefined;
    if (stdin != null) {
      // A child that exits without reading its input must not crash the host (EPIPE).
      stdin.on("error", () => {});
      if (policy.input instanceof StreamInput) this.#feed(policy.input, stdin);
      else if (policy.input !== undefined) stdin.end(policy.input);
    }
    if (policy.buffer) {
      for (let index = 1; index <= 2; index++) {
        const stream = this.#streams[index] as Readable | null | undefined;
        if (stream != null) this.#capture(index, stream, undefined);
      }
    }
    // The engine ends the run at the timeout (the native one off this
    // thread); this timer only learns of it, to record it and cut the output
    // after the grace.
    const timeoutMs = this.#plan.timeoutMs;
    if (timeoutMs !== undefined) this.#learnTimeoutAfter(timeoutMs);
    if (policy.signal !== undefined) {
      const signal = policy.signal;
      this.#onAbort = () => this.#terminate("abort", signal.reason);
      signal.addEventListener("abort", this.#onAbort, { once: true });
    }
    if (!policy.ref) this.unref();
  }

  /**
   * The parent's end of the child's stdin ("pipe" slot only), else null; also
   * null when `input` was given (the run writes it).
   */
  get stdin(): Writable | null {
    if (this.#policy.input !== undefined) return null;
    return (this.#streams[0] as Writable | null | undefined) ?? null;
  }

  /**
   * The child's stdout ("pipe" slot only), else null. With `buffer` (the
   * default) it is a view of the capture: every byte from the child's first,
   * whenever it is first read, while the result still gets them all (up to
   * maxBuffer); the host holds what it captures either way, and the child
   * is not held back. With `buffer: false` it is the pipe itself, the only
   * reader: a slow reader holds the child back, and nothing is kept.
   */
  get stdout(): Readable | null {
    return this.#streamAt(1) as Readable | null;
  }

  /** The child's stderr ("pipe" slot only), else null; as `stdout`. */
  get stderr(): Readable | null {
    return this.#streamAt(2) as Readable | null;
  }

  /** Parent ends of every slot ("pipe" slots only; others null); stdout and stderr as above. */
  get stdio(): ReadonlyArray<Readable | Writable | null> {
    return this.#streams.map((_, slot) => (slot === 0 ? this.stdin : this.#streamAt(slot)));
  }

  /** The outcome as a promise (created on first access). */
  get result(): Promise<R> {
    if (this.#promise === undefined) {
      const outcome = this.#outcome;
      if (outcome !== undefined) {
        this.#promise = outcome.ok ? Promise.resolve(outcome.value) : Promise.reject(outcome.error);
      } else {
        this.#promise = new Promise<SpawnResult>((resolve, reject) => {
          this.#resolve = resolve;
          this.#reject = reject;
        });
      }
    }
    // Built untyped; the options this subprocess was started with type it.
    return this.#promise as Promise<R>;
  }

  // biome-ignore lint/suspicious/noThenProperty: a Subprocess is deliberately awaitable.
  then<A = R, B = never>(
    onfulfilled?: ((value: R) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.result.then(onfulfilled, onrejected);
  }

  /**
   * The child's stdout (default) or stderr as lines, while it runs, from its
   * first byte (line-iterator.ts). Iterating leaves the result as it is: with
   * `buffer` (the default) the output is captured in full as well and counts
   * against maxBuffer; with `buffer: false` nothing is kept. Throws TypeError
   * for a stream that is not a pipe; for a child that never started, the
   * iteration rejects with the spawn error, or ends empty for a run aborted
   * before it started with `reject: false` (its result resolves).
   */
  lines(stream: "stdout" | "stderr" = "stdout"): AsyncGenerator<string, void, undefined> {
    if (stream !== "stdout" && stream !== "stderr") {
      throw new TypeError('lines: stream must be "stdout" or "stderr"');
    }
    // No pid: nothing started (the fallback learns of an exec failure this way too).
    if (this.pid === undefined) return rejectedLines(this.result);
    const slot = stream === "stdout" ? 1 : 2;
    const readable = this.#streamAt(slot) as Readable | null;
    if (readable === null) throw new TypeError(`lines: the child's ${stream} is not a pipe`);
    const encoding = this.#policy.encoding === "buffer" ? "utf8" : this.#policy.encoding;
    // A capture's own view has every byte; an uncaptured pipe is read from where it is.
    const lines = this.#captures[slot]?.view() ?? readable;
    return streamLines(lines, () => undefined, encoding);
  }

  /** `for await (const line of subprocess)`: the lines of stdout (see lines()). */
  [Symbol.asyncIterator](): AsyncGenerator<string, void, undefined> {
    return this.lines("stdout");
  }

  /**
   * Sends a signal to the child (default SIGTERM) through its pidfd on the
   * native engine. Returns false when the child is gone. Throws TypeError for
   * an unknown signal.
   */
  kill(signal: string | number = "SIGTERM"): boolean {
    const number = signalNumber(signal, "kill");
    return this.#child !== undefined && this.#child.kill(number) === 0;
  }

  /**
   * Sends a signal to the child's whole process group (kill(-pgid)). Only for
   * children started with `setsid` or `processGroup` (or a timeout/signal);
   * returns false otherwise, and once the child has exited (its group id may
   * then belong to someone else).
   */
  killGroup(signal: string | number = "SIGTERM"): boolean {
    const number = signalNumber(signal, "killGroup");
    if (this.#child === undefined || !this.#policy.ownGroup || this.#exit !== undefined)
      return false;
    return this.#child.killGroup(number) === 0;
  }

  /** Lets the host exit while the child runs (the child is not killed). */
  unref(): this {
    this.#unrefed = true;
    this.#child?.unref();
    for (const stream of this.#streams) (stream as { unref?: () => void } | null)?.unref?.();
    return this;
  }

  /** Keeps the host alive until the child exits (the default). */
  ref(): this {
    this.#unrefed = false;
    this.#child?.ref();
    for (const stream of this.#streams) (stream as { ref?: () => void } | null)?.ref?.();
    return this;
  }

  /** The stream given out for an output slot (see `stdout`). */
  #streamAt(slot: number): Readable | Writable | null {
    const given = this.#given[slot];
    if (given !== undefined) return given;
    if (this.#engineCaptured.includes(slot)) this.#takeOver(slot);
    const capture = this.#captures[slot];
    let stream: Readable | undefined;
    if (capture !== undefined) stream = capture.view();
    // The engine read it to the end: its bytes, as a stream (the result has them too).
    else if (this.#child?.captured.includes(slot))
      stream = replayStream(this.#engineOutput?.[slot]);
    if (stream === undefined) return this.#streams[slot] ?? null;
    this.#given[slot] = stream;
    return stream;
  }

  /** Writes a stream `input`; a failing one ends the run with failure "input". */
  #feed(input: StreamInput, stdin: Writable): void {
    feedInput(input, stdin).catch((error: unknown) => {
      this.#terminate("input", error);
      stdin.destroy();
    });
  }

  /** Captures one stream in JavaScript, after `initial` (bytes the engine read first). */
  #capture(slot: number, stream: Readable | null, initial: Buffer | undefined): void {
    this.#pending++;
    this.#captures[slot] = new OutputCapture(
      stream,
      this.#plan.maxBuffer,
      () => this.#terminate("maxBuffer", undefined),
      initial,
    );
    if (stream === null) {
      this.#done();
      return;
    }
    stream.on("error", () => {});
    stream.once("close", () => this.#done());
  }

  /**
   * A captured stream is being accessed: the engine stops reading it and the
   * rest flows through a real stream, captured like on the fallback engine,
   * after the bytes the engine read before (the given stream, a view of the
   * capture, replays them).
   */
  #takeOver(slot: number): void {
    this.#engineCaptured = this.#engineCaptured.filter((s) => s !== slot);
    // Held across takeOver(), which may deliver the exit before it returns.
    this.#pending++;
    const taken = this.#child!.takeOver(slot);
    if (taken !== null) {
      const stream = taken.stream;
      if (stream !== null && this.#unrefed) (stream as { unref?: () => void }).unref?.();
      const streams = this.#streams.slice();
      streams[slot] = stream;
      this.#streams = streams;
      this.#capture(slot, stream, taken.bytes);
    }
    this.#done();
  }

  #learnTimeoutAfter(ms: number): void {
    this.#timer = setTimeout(() => this.#terminate("timeout", undefined), ms);
    this.#timer.unref();
  }

  /**
   * An ending (deadline-plan.ts, phases 1-3). The engine executes the first
   * one: it begins a timeout's itself (this only learns of it), an abort's or
   * maxBuffer's is asked for here. Its record says whether the leader was
   * still running and when the signal went. Later ones are only recorded.
   */
  #terminate(cause: EndingCause, reason: unknown): void {
    const child = this.#child;
    if (this.#outcome !== undefined || child === undefined) return;
    if (cause === "timeout" && this.#timeoutSeen) return;
    if (!this.#terminating) {
      let record = cause === "timeout" ? child.ending() : child.endNow();
      // The exit came first: whatever the engine does now finds the leader gone.
      if (record === null && this.#exit !== undefined) record = LEADER_GONE;
      // The engine's own timer, a hair behind this one, has not fired yet: look again soon.
      if (record === null) {
        this.#lookAgainMs = Math.min(this.#lookAgainMs * 2, 100);
        this.#learnTimeoutAfter(this.#lookAgainMs);
        return;
      }
      this.#begun(record);
      if (!record.byDeadline) this.#record(cause, record.leaderRunning);
      // The engine's deadline came first: this cause is a later ending.
      else if (cause !== "timeout") this.#record(cause, this.#laterLeaderRunning());
    } else {
      this.#record(cause, this.#laterLeaderRunning());
    }
    this.#blame(cause, reason);
  }

  /** The engine's first ending began: the output is cut after the grace. */
  #begun(record: EndingRecord): void {
    this.#terminating = true;
    this.#leaderGone = !record.leaderRunning;
    this.#killedAt = record.at;
    if (record.byDeadline) this.#record("timeout", record.leaderRunning);
    this.#graceTimer = setTimeout(() => this.#afterGrace(), this.#plan.graceMs);
    this.#graceTimer.unref();
  }

  /** A later ending counts only while the leader is there (the first one found it, no exit yet). */
  #laterLeaderRunning(): boolean {
    return this.#exit === undefined && !this.#leaderGone;
  }

  #record(cause: EndingCause, leaderRunning: boolean): void {
    if (cause === "timeout") this.#timeoutSeen = true;
    this.#endings.push({ cause, leaderRunning });
  }

  /** The reason (an abort's) goes with the ending that names the failure. */
  #blame(cause: EndingCause, reason: unknown): void {
    if (this.#killCause === undefined && endingFailure(this.#endings) === cause) {
      this.#killCause = reason;
    }
  }

  #afterGrace(): void {
    this.#endCapture = true;
    // May deliver the exit (and settle) before it returns.
    this.#child?.endCaptureAtExit();
    if (this.#exit !== undefined) this.#endStreams();
  }

  /** Stops the captures still reading a stream: what arrived is the output. */
  #endStreams(): void {
    this.#captures.forEach((capture, slot) => {
      if (capture !== undefined) this.#streams[slot]?.destroy();
    });
  }

  #onExit(exit: EngineExit | Error): void {
    const engineCaptured = this.#engineCaptured;
    this.#engineCaptured = NONE;
    if (exit instanceof Error) {
      for (const stream of this.#streams) stream?.destroy();
      // The fallback reports exec failures here, and so does the native engine for a child
      // that changes its credentials (nobody waits for its exec); other native failures
      // are thrown from start().
      this.#settle({ ok: false, error: explainCwd(exit, this.#request?.cwd) });
      return;
    }
    // A timeout the engine ended while this thread was busy: recorded before the exit.
    if (!this.#terminating && this.#child?.ending()?.byDeadline === true) {
      this.#terminate("timeout", undefined);
    }
    if (engineCaptured.length > 0) this.#engineOutput = exit.output ?? [];
    this.#exit = exit;
    this.#exitedAt = exit.exitedAt ?? performance.now();
    if (this.#endCapture) this.#endStreams();
    this.#done();
  }

  #done(): void {
    if (--this.#pending > 0 || this.#outcome !== undefined) return;
    const exit = this.#exit!;
    (this.#streams[0] as Writable | null | undefined)?.destroy();
    const policy = this.#policy;
    let stdout: string | Buffer | null;
    let stderr: string | Buffer | null;
    try {
      stdout = this.#output(1, policy.encoding);
      stderr = this.#output(2, policy.encoding);
    } catch (error) {
      // e.g. ERR_STRING_TOO_LONG: the run's error, never an exception in the exit callback.
      this.#settle({ ok: false, error });
      return;
    }
    // Never below 0: a clock read a hair apart on two threads is no negative run.
    const durationMs = Math.max(0, this.#exitedAt - this.#start);
    const failure: FailureReason | null = runFailure(this.#endings, exit);
    if (failure !== null && policy.reject) {
      this.#settle({
        ok: false,
        error: this.#failure(failure, exit, { stdout, stderr, durationMs }),
      });
      return;
    }
    this.#settle({
      ok: true,
      value: {
        pid: this.pid,
        exitCode: exit.exitCode,
        signal: exit.signal,
        stdout,
        stderr,
        durationMs,
        resourceUsage: exit.resourceUsage,
        native: this.native,
        contained: containedReport(policy.contained, exit.limitEvents),
        failure,
        killedAt: this.#killedAt,
      },
    });
  }

  /** The result of a run aborted before it started: what a captured pipe gives is empty. */
  #notStarted(request: EngineRequest): SpawnResult {
    const policy = this.#policy;
    const empty = (slot: number): string | Buffer | null =>
      policy.buffer && request.stdio[slot] === "pipe"
        ? policy.encoding === "buffer"
          ? Buffer.alloc(0)
          : ""
        : null;
    return {
      pid: undefined,
      exitCode: null,
      signal: null,
      stdout: empty(1),
      stderr: empty(2),
      durationMs: performance.now() - this.#start,
      resourceUsage: null,
      native: this.native,
      contained: null,
      failure: "abort",
      killedAt: null,
    };
  }

  #output(slot: number, encoding: BufferEncoding | "buffer"): string | Buffer | null {
    const capture = this.#captures[slot];
    if (capture !== undefined) return capture.value(encoding);
    const output = this.#engineOutput;
    if (output === undefined || !this.#child!.captured.includes(slot)) return null;
    const bytes = output[slot] ?? EMPTY;
    return encoding === "buffer" ? bytes : bytes.toString(encoding);
  }

  #failure(
    reason: FailureReason,
    exit: EngineExit | null,
    output: {
      stdout: string | Buffer | null;
      stderr: string | Buffer | null;
      durationMs: number;
    } | null,
  ): SubprocessError {
    return new SubprocessError({
      reason,
      // Built only for a failure: a run that succeeds never pays for them.
      argv: this.#request?.argv.map(argText) ?? [],
      envNames: this.#request?.entries.map((e) => e.name) ?? [],
      exitCode: exit?.exitCode ?? null,
      signal: exit?.signal ?? null,
      stdout: output?.stdout ?? null,
      stderr: output?.stderr ?? null,
      durationMs: output?.durationMs ?? performance.now() - this.#start,
      resourceUsage: exit?.resourceUsage ?? null,
      contained: containedReport(this.#policy.contained, exit?.limitEvents),
      timeoutMs: this.#plan.timeoutMs,
      killedAt: this.#killedAt,
      cause: this.#killCause,
    });
  }

  #clearTimers(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (this.#graceTimer !== undefined) clearTimeout(this.#graceTimer);
    if (this.#onAbort !== undefined)
      this.#policy.signal?.removeEventListener("abort", this.#onAbort);
  }

  #settle(outcome: Outcome): void {
    if (this.#outcome !== undefined) return;
    this.#clearTimers();
    this.#outcome = outcome;
    if (outcome.ok) this.#resolve?.(outcome.value);
    else this.#reject?.(outcome.error);
  }
}
