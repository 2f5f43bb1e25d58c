/**
 * `spawnSync(file, args, options)`: `spawn`'s exact primitive, run to
 * completion on the calling thread.
 *
 * The same validation, environment, limits check and errors as `spawn`; the
 * outcome is returned (or thrown) instead of awaited. Natively the child is
 * started with posix_spawn and watched with poll(2) on its pidfd and pipes in
 * this thread — no fork of the (possibly large) host, no event loop turn.
 */
import { Buffer } from "node:buffer";
import { performance } from "node:perf_hooks";
import { ownDataValue } from "../known-options.js";
import { nativeBinding } from "../native.js";
import { containedReport } from "./contain.js";
import { planContainment } from "./contain-plan.js";
import { deadlinePlan, runFailure } from "./deadline-plan.js";
import type { EngineRequest } from "./engine.js";
import { releasePipeEnds } from "./kernel-pipe.js";
import { outputLimit } from "./output-limit.js";
import type { KnownKeys, NoOptions, SyncResultOf } from "./output-type.js";
import { type FailureReason, SubprocessError } from "./spawn-errors.js";
import type { SpawnOptions } from "./spawn-options.js";
import { engineRequest, explainCwd, spawnInput } from "./spawn-request.js";
import { StreamInput } from "./stream-input.js";
import type { SpawnResult } from "./subprocess.js";
import {
  canRunSyncNatively,
  fallbackSyncEngine,
  nativeSyncEngine,
  type SyncEngine,
} from "./sync-engines.js";

/** `spawn`'s options without those only a running (asynchronous) child can use; `input` is whole. */
export type SpawnSyncOptions = Omit<SpawnOptions, "signal" | "ref" | "cleanup" | "input"> & {
  input?: string | Uint8Array;
};

// cleanup: the call blocks this thread, so nothing could register the group in
// time to matter; `parentDeathSignal` is the synchronous way (docs/spawn.md).
const ASYNC_ONLY = ["signal", "ref", "cleanup"] as const;

let engineFor: { binding: ReturnType<typeof nativeBinding>; engine: SyncEngine } | undefined;

function currentSyncEngine(): { native: boolean; run: SyncEngine } {
  const binding = nativeBinding();
  if (engineFor === undefined || engineFor.binding !== binding) {
    engineFor = {
      binding,
      engine: canRunSyncNatively(binding) ? nativeSyncEngine(binding) : fallbackSyncEngine,
    };
  }
  return { native: engineFor.engine !== fallbackSyncEngine, run: engineFor.engine };
}

function argText(arg: string | Buffer): string {
  return typeof arg === "string" ? arg : arg.toString("utf8");
}

/**
 * Starts `file` with `args` and exactly `options.env` (default: empty) and
 * waits for it on this thread. Returns the SpawnResult; throws TypeError /
 * InvalidEnvError for invalid arguments, a Node-style system error when the
 * exec fails, a SpawnError when it would not fit the kernel's limits, and a
 * SubprocessError for a failed run (unless `reject: false`). `timeout`,
 * `killSignal`, `killGraceMs`, `maxBuffer` and `input` behave as for `spawn`;
 * only stdio slots 0–2 may be pipes. The result's stdout/stderr are typed
 * from the options as for `spawn` (output-type.ts).
 */
export function spawnSync(
  file: string,
  args?: ReadonlyArray<string | Buffer>,
  options?: undefined,
): SyncResultOf<NoOptions>;
export function spawnSync<const O extends SpawnSyncOptions>(
  file: string,
  args: ReadonlyArray<string | Buffer> | undefined,
  options: KnownKeys<O, SpawnSyncOptions> | undefined,
): SyncResultOf<O>;
export function spawnSync(
  file: string,
  args: ReadonlyArray<string | Buffer> = [],
  options?: SpawnSyncOptions,
): SpawnResult {
  try {
    return runSync(file, args, options);
  } finally {
    // The child holds its own copies once started, or never will.
    releasePipeEnds(ownDataValue(options, "stdio"));
  }
}

function runSync(
  file: string,
  args: ReadonlyArray<string | Buffer>,
  options: SpawnSyncOptions | undefined,
): SpawnResult {
  for (const key of ASYNC_ONLY) {
    // Own keys only: an inherited `signal` must not refuse every spawnSync.
    if (
      options != null &&
      Object.hasOwn(options, key) &&
      (options as Record<string, unknown>)[key] !== undefined
    ) {
      throw new TypeError(
        `spawnSync: options.${key} is only for spawn (spawnSync returns when the child has exited)`,
      );
    }
  }
  const input = spawnInput("spawnSync", file, args, options);
  const o = input.options;
  if (o.input instanceof StreamInput) {
    throw new TypeError(
      "spawnSync: options.input must be a string or Uint8Array (a stream needs spawn)",
    );
  }
  o.stdio.forEach((slot, index) => {
    if (slot === "pipe" && index > 2) {
      throw new TypeError(`spawnSync: options.stdio[${index}] cannot be "pipe" (only 0–2)`);
    }
  });
  const start = performance.now();
  const engine = currentSyncEngine();
  const containment = planContainment(o.contain, engine.native);
  const request: EngineRequest = {
    ...engineRequest(input, containment.raw),
    // Piped stdout/stderr are always read (nothing else could drain them).
    capture: undefined,
  };
  let exit: ReturnType<SyncEngine>;
  try {
    exit = engine.run(request, {
      input: o.input === undefined ? undefined : Buffer.from(o.input),
      deadline: deadlinePlan({
        timeout: o.timeout,
        killSignal: o.killSignal,
        killGraceMs: o.killGraceMs,
        // What a Buffer (or a string in this encoding) can hold; more could never be delivered.
        maxBuffer: outputLimit(o.maxBuffer, o.encoding),
        ownGroup: o.setsid || o.processGroup,
      }),
    });
  } catch (error) {
    throw explainCwd(error, input.cwd);
  }
  const decode = (bytes: Buffer | null): string | Buffer | null =>
    bytes === null || !o.buffer
      ? null
      : o.encoding === "buffer"
        ? bytes
        : bytes.toString(o.encoding);
  const stdout = decode(exit.stdout);
  const stderr = decode(exit.stderr);
  const durationMs = performance.now() - start;
  const failure: FailureReason | null = runFailure(exit.endings, exit);
  if (failure !== null && o.reject) {
    throw new SubprocessError({
      reason: failure,
      argv: request.argv.map(argText),
      envNames: request.entries.map((e) => e.name),
      exitCode: exit.exitCode,
      signal: exit.signal,
      stdout,
      stderr,
      durationMs,
      resourceUsage: exit.resourceUsage,
      contained: containedReport(containment.report, exit.limitEvents),
      timeoutMs: o.timeout,
      killedAt: exit.killedAt,
    });
  }
  return {
    pid: exit.pid,
    exitCode: exit.exitCode,
    signal: exit.signal,
    stdout,
    stderr,
    durationMs,
    resourceUsage: exit.resourceUsage,
    native: engine.native,
    contained: containedReport(containment.report, exit.limitEvents),
    failure,
    killedAt: exit.killedAt,
  };
}
