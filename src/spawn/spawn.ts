/**
 * `spawn(file, args, options)`: the exact spawn primitive.
 *
 * Order of work: resolve `file` (PATH chosen by the caller), validate and
 * render the environment exactly, check the exec against the kernel's limits
 * (a SpawnError instead of a raw E2BIG), then start the child on the native
 * engine — or, when the addon is off, on the child_process fallback.
 */
import type { Buffer } from "node:buffer";
import { constants } from "node:os";
import { ownDataValue } from "../known-options.js";
import { type NativeBinding, nativeBinding, nativeStatus } from "../native.js";
import { planContainment } from "./contain-plan.js";
import type { Engine, EngineRequest } from "./engine.js";
import { fallbackEngine } from "./fallback-engine.js";
import { releasePipeEnds } from "./kernel-pipe.js";
import { canSpawnNatively, nativeEngine } from "./native-engine.js";
import { outputLimit } from "./output-limit.js";
import type { KnownKeys, NoOptions, ResultOf } from "./output-type.js";
import type { SpawnOptions } from "./spawn-options.js";
import { engineRequest, spawnInput } from "./spawn-request.js";
import { Subprocess } from "./subprocess.js";

let engineFor: { binding: NativeBinding | null; engine: Engine } | undefined;

/** The engine spawns use now: the addon's, or child_process when it is off. */
export function currentEngine(): Engine {
  const binding = nativeBinding();
  if (engineFor === undefined || engineFor.binding !== binding) {
    const engine = canSpawnNatively(binding)
      ? nativeEngine(binding)
      : fallbackEngine(nativeStatus().reason ?? "the addon has no spawn()");
    engineFor = { binding, engine };
  }
  return engineFor.engine;
}

/** A Subprocess that never started: awaiting it rejects with `error` (nothing is thrown). */
export function failedBeforeStart(error: unknown): Subprocess {
  const failing: Engine = {
    native: currentEngine().native,
    start() {
      throw error;
    },
  };
  return new Subprocess(failing, undefined as unknown as EngineRequest, {
    encoding: "utf8",
    buffer: false,
    maxBuffer: 1,
    timeout: undefined,
    killSignal: constants.signals.SIGTERM,
    killGraceMs: 0,
    signal: undefined,
    reject: true,
    input: undefined,
    ownGroup: false,
    ref: true,
  });
}

/**
 * Starts `file` with `args` and exactly `options.env` (default: an empty
 * environment). Returns a Subprocess at once; it is awaitable and settles
 * with a SpawnResult, or rejects with a system error (exec failure: ENOENT,
 * EACCES, ENOEXEC…, syscall "posix_spawn"), a SpawnError (the exec does not
 * fit the kernel's limits; nothing started) or a SubprocessError (a failed
 * run). Throws synchronously only for invalid arguments (TypeError /
 * InvalidEnvError). The result's stdout/stderr are typed from the options:
 * string by default, Buffer with `encoding: "buffer"`, null for a stream
 * that is not captured (output-type.ts).
 */
export function spawn(
  file: string,
  args?: ReadonlyArray<string | Buffer>,
  options?: undefined,
): Subprocess<ResultOf<NoOptions>>;
export function spawn<const O extends SpawnOptions>(
  file: string,
  args: ReadonlyArray<string | Buffer> | undefined,
  options: KnownKeys<O, SpawnOptions> | undefined,
): Subprocess<ResultOf<O>>;
export function spawn(
  file: string,
  args: ReadonlyArray<string | Buffer> = [],
  options?: SpawnOptions,
): Subprocess {
  try {
    return startSubprocess(file, args, options);
  } finally {
    // The child holds its own copies once started, or never will.
    releasePipeEnds(ownDataValue(options, "stdio"));
  }
}

function startSubprocess(
  file: string,
  args: ReadonlyArray<string | Buffer>,
  options: SpawnOptions | undefined,
): Subprocess {
  const input = spawnInput("spawn", file, args, options);
  const o = input.options;
  const engine = currentEngine();
  let request: EngineRequest;
  let containment: ReturnType<typeof planContainment> | undefined;
  try {
    // Most steps are not contained: nothing to plan or look up.
    containment = o.contain === undefined ? undefined : planContainment(o.contain, engine.native);
    request = engineRequest(input, containment?.raw);
  } catch (error) {
    return failedBeforeStart(error);
  }
  return new Subprocess(engine, request, {
    encoding: o.encoding,
    buffer: o.buffer,
    maxBuffer: outputLimit(o.maxBuffer, o.encoding),
    timeout: o.timeout,
    killSignal: o.killSignal,
    killGraceMs: o.killGraceMs,
    signal: o.signal,
    reject: o.reject,
    input: o.input,
    ownGroup: o.setsid || o.processGroup,
    ref: o.ref,
    contained: containment === undefined ? null : containment.report,
  });
}
