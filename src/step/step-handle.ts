/**
 * What runtime.bash returns: a running step you can await (it resolves to
 * the step's result, as before) and watch while it runs —
 * `for await (const line of handle.lines("stdout" | "stderr" | "all"))`,
 * `handle.pid`, `handle.kill()`. Spilled values, timeouts and cleanup are
 * the step's, unchanged: the handle only observes it.
 */
import type { Readable, Writable } from "node:stream";
import type { Subprocess } from "../spawn/subprocess.js";
import { LineHub, type LineStream } from "./line-hub.js";

export class StepHandle<R> implements Promise<R> {
  /** A Promise in every way code that stored runtime.bash's promise relies on (then, catch, finally). */
  readonly [Symbol.toStringTag] = "StepHandle";
  /** The step's bash process (its process group leader); undefined when nothing started. */
  readonly pid: number | undefined;
  /** The step's outcome, as awaiting the handle gives it. */
  readonly result: Promise<R>;
  readonly #child: Subprocess | undefined;
  #hub: LineHub | undefined;

  /**
   * `child`: the started step (undefined when it failed before starting);
   * `result(hub)`: its outcome, given the hub when one was started.
   */
  constructor(
    child: Subprocess | undefined,
    result: (hub: () => LineHub | undefined) => Promise<R>,
    startHub: boolean,
  ) {
    this.#child = child;
    this.pid = child?.pid;
    if (startHub) this.#lineHub();
    this.result = result(() => this.#hub);
    // Observing is optional: a rejection nobody awaits is the host's to see
    // through `result`/`then`, never an unhandled one from here.
    this.result.catch(() => {});
  }

  /** A handle for a step that never started: every read gives `error`. */
  static failed<R>(error: unknown): StepHandle<R> {
    return new StepHandle<R>(undefined, () => Promise.reject(error), false);
  }

  // biome-ignore lint/suspicious/noThenProperty: a step handle is deliberately awaitable.
  then<A = R, B = never>(
    onfulfilled?: ((value: R) => A | PromiseLike<A>) | null,
    // biome-ignore lint/suspicious/noExplicitAny: Promise's own signature, so code typed for a Promise compiles.
    onrejected?: ((reason: any) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.result.then(onfulfilled, onrejected);
  }

  // biome-ignore lint/suspicious/noExplicitAny: as then().
  catch<B = never>(onrejected?: ((reason: any) => B | PromiseLike<B>) | null): Promise<R | B> {
    return this.result.catch(onrejected);
  }

  finally(onfinally?: (() => void) | null): Promise<R> {
    return this.result.finally(onfinally);
  }

  #lineHub(): LineHub | undefined {
    const child = this.#child;
    // No pid: nothing started (its streams are null); reads give the step's error.
    if (this.#hub === undefined && child !== undefined && child.pid !== undefined) {
      const sources: Partial<Record<LineStream, AsyncIterable<string>>> = {};
      for (const stream of ["stdout", "stderr"] as const) {
        if (child[stream] !== null) sources[stream] = child.lines(stream);
      }
      this.#hub = new LineHub(sources);
    }
    return this.#hub;
  }

  /**
   * The step's output as lines while it runs, from its first byte: "stdout"
   * (the default), "stderr", or "all" (both, interleaved as their lines
   * arrived). Any number of loops may read, each gets every line; leaving a
   * loop early stops the loop, not the step. Throws TypeError for a stream
   * the step's `stdio` does not capture; for a step that never started, the
   * iteration rejects with the step's error.
   */
  lines(stream: LineStream | "all" = "stdout"): AsyncGenerator<string, void, undefined> {
    if (stream !== "stdout" && stream !== "stderr" && stream !== "all") {
      throw new TypeError('lines: stream must be "stdout", "stderr" or "all"');
    }
    const hub = this.#lineHub();
    if (hub === undefined) return failedLines(this.result);
    if (stream !== "all" && !hub.has(stream)) {
      throw new TypeError(`lines: the step's ${stream} is not captured (see its stdio)`);
    }
    return hub.lines(stream);
  }

  /**
   * The step's stdout as a readable stream (its `stdio[1]` is "pipe", the
   * default), else null; null too when nothing started. It carries every
   * byte from the step's first; read it in the same tick as you first touch
   * it, as any flowing stream. The result's `stdout` still holds the whole
   * output (up to maxBuffer) unless `buffer: false`, under which the stream
   * is the only reader and a slow reader holds the step back. lines() may be
   * used as well, at any time: it starts with what the capture already took.
   */
  get stdout(): Readable | null {
    return this.#child?.stdout ?? null;
  }

  /** The step's stderr as a readable stream: as `stdout`, for `stdio[2]`. */
  get stderr(): Readable | null {
    return this.#child?.stderr ?? null;
  }

  /**
   * The step's stdin as a writable stream when its `stdio[0]` is "pipe" and
   * no `input` was given, else null. End it (`stdin.end()`) when done: the
   * step reads until then. Writes after the step has exited are dropped
   * (EPIPE is never an error of the host).
   */
  get stdin(): Writable | null {
    return this.#child?.stdin ?? null;
  }

  /** `for await (const line of handle)`: stdout's lines. */
  [Symbol.asyncIterator](): AsyncGenerator<string, void, undefined> {
    return this.lines("stdout");
  }

  /**
   * Sends `signal` (default SIGTERM) to the step's whole process group.
   * False when nothing started or the step has exited. Throws TypeError for
   * an unknown signal.
   */
  kill(signal: string | number = "SIGTERM"): boolean {
    return this.#child?.killGroup(signal) ?? false;
  }
}

async function* failedLines(result: Promise<unknown>): AsyncGenerator<string, void, undefined> {
  await result;
  yield* [];
}
