/**
 * `spawn(file, args, options)`: the exact spawn primitive.
 *
 * Order of work: resolve `file` (PATH chosen by the caller), validate and
 * render the environment exactly, check the exec against the kernel's limits
 * (a SpawnError instead of a raw E2BIG), then start the child on the native
 * engine — or, when the addon is off, on the child_process fallback.
 */
import { Buffer } from "node:buffer";
import { accessSync, constants as fsConstants, statSync } from "node:fs";
import { constants } from "node:os";
import { resolve } from "node:path";
import { envEntries, toEnvp } from "../env-input.js";
import { displayName, systemError } from "../errors.js";
import { footprintOf } from "../limits.js";
import { type NativeBinding, nativeBinding, nativeStatus } from "../native.js";
import type { CaptureRequest, Engine, EngineRequest, StdioSlot } from "./engine.js";
import { fallbackEngine } from "./fallback-engine.js";
import { canSpawnNatively, nativeEngine } from "./native-engine.js";
import { resolveFile } from "./resolve-file.js";
import { type OffendingString, SpawnError } from "./spawn-errors.js";
import { normalizeOptions, type SpawnOptions } from "./spawn-options.js";
import { Subprocess } from "./subprocess.js";

let engineFor: { binding: NativeBinding | null; engine: Engine } | undefined;

function currentEngine(): Engine {
  const binding = nativeBinding();
  if (engineFor === undefined || engineFor.binding !== binding) {
    const engine = canSpawnNatively(binding)
      ? nativeEngine(binding)
      : fallbackEngine(nativeStatus().reason ?? "the addon has no spawn()");
    engineFor = { binding, engine };
  }
  return engineFor.engine;
}

const LARGEST = 5;

function offenders(
  argv: ReadonlyArray<string | Buffer>,
  entries: ReturnType<typeof envEntries>,
  oversized: ReturnType<typeof footprintOf>["oversized"],
): OffendingString[] {
  if (oversized.length > 0) return [...oversized];
  const all: OffendingString[] = [
    ...argv.map((arg, index) => ({
      kind: "argv" as const,
      index,
      bytes: (typeof arg === "string" ? Buffer.byteLength(arg) : arg.length) + 1,
    })),
    ...entries.map((e) => ({ kind: "env" as const, name: displayName(e.name), bytes: e.bytes })),
  ];
  return all.sort((a, b) => b.bytes - a.bytes).slice(0, LARGEST);
}

function failedBeforeStart(error: unknown): Subprocess {
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
 * InvalidEnvError).
 */
export function spawn(
  file: string,
  args: ReadonlyArray<string | Buffer> = [],
  options?: SpawnOptions,
): Subprocess {
  if (typeof file !== "string" || file.includes("\0")) {
    throw new TypeError("spawn: file must be a string without NUL");
  }
  if (!Array.isArray(args)) throw new TypeError("spawn: args must be an array");
  for (const [i, arg] of args.entries()) {
    if (typeof arg !== "string" && !Buffer.isBuffer(arg)) {
      throw new TypeError(`spawn: args[${i}] must be a string or Buffer`);
    }
  }
  const o = normalizeOptions(options);
  const cwd = o.cwd === undefined ? undefined : resolve(o.cwd);
  const argv = [o.argv0 ?? file, ...args];
  const entries = envEntries(o.env, "spawn: options.env");
  const envp = toEnvp(entries);

  let resolved: string;
  try {
    resolved = resolveFile(file, o.path, cwd ?? process.cwd());
  } catch (error) {
    return failedBeforeStart(error);
  }
  const fit = footprintOf(resolved, argv, entries, undefined, cwd);
  if (!fit.fits) {
    return failedBeforeStart(
      new SpawnError(resolved, fit, offenders(argv, entries, fit.oversized)),
    );
  }
  const engine = currentEngine();
  const request: EngineRequest = {
    file: resolved,
    argv,
    envp,
    entries,
    cwd,
    stdio: o.stdio,
    setsid: o.setsid,
    setpgroup: o.processGroup,
    capture: o.buffer ? captureRequest(o.stdio, o.maxBuffer) : undefined,
  };
  const startEngine: Engine = {
    native: engine.native,
    start(req, onExit, onOverflow) {
      // The fallback reports exec failures through onExit, the native engine by throwing.
      const explained: typeof onExit = (exit) =>
        onExit(exit instanceof Error ? (explainCwd(exit, cwd) as Error) : exit);
      try {
        return engine.start(req, explained, onOverflow);
      } catch (error) {
        throw explainCwd(error, cwd);
      }
    },
  };
  return new Subprocess(startEngine, request, {
    encoding: o.encoding,
    buffer: o.buffer,
    maxBuffer: o.maxBuffer,
    timeout: o.timeout,
    killSignal: o.killSignal,
    killGraceMs: o.killGraceMs,
    signal: o.signal,
    reject: o.reject,
    input: o.input,
    ownGroup: o.setsid || o.processGroup,
    ref: o.ref,
  });
}

const STDOUT_AND_STDERR: readonly number[] = [1, 2];
const STDOUT: readonly number[] = [1];
const STDERR: readonly number[] = [2];

/** The output the Subprocess captures: piped stdout and stderr. */
function captureRequest(
  stdio: readonly StdioSlot[],
  maxBuffer: number,
): CaptureRequest | undefined {
  const out = stdio[1] === "pipe";
  const err = stdio[2] === "pipe";
  if (!out && !err) return undefined;
  return { slots: out && err ? STDOUT_AND_STDERR : out ? STDOUT : STDERR, maxBuffer };
}

/**
 * posix_spawn and child_process report a cwd that cannot be entered as if the
 * file were at fault (ENOENT / ENOTDIR / EACCES naming the file, or nothing).
 * When the cwd is the cause, say so: syscall "chdir", path the cwd, the
 * kernel's own errno for it (stat's, ENOTDIR for a non-directory, EACCES
 * without search permission), the original error as `cause`.
 */
function explainCwd(error: unknown, cwd: string | undefined): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (cwd === undefined || (code !== "ENOENT" && code !== "ENOTDIR" && code !== "EACCES")) {
    return error;
  }
  let errno: number | undefined;
  try {
    if (!statSync(cwd).isDirectory()) errno = constants.errno.ENOTDIR;
    else accessSync(cwd, fsConstants.X_OK);
  } catch (failure) {
    errno ??= (failure as { errno?: number }).errno ?? constants.errno.ENOENT;
  }
  if (errno === undefined) return error;
  const chdir = systemError(errno, "chdir", cwd);
  chdir.cause = error;
  return chdir;
}
