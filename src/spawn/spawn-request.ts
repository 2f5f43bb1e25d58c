/**
 * From `(file, args, options)` to the exact request an engine starts: shared
 * by `spawn` and `spawnSync`.
 *
 * `spawnInput` does every synchronous check (TypeError / InvalidEnvError for
 * invalid arguments). `engineRequest` then resolves `file` (PATH chosen by
 * the caller) and checks the exec against the kernel's limits; it throws the
 * errors a spawn reports as its outcome (a resolution error, or a SpawnError
 * instead of a raw E2BIG).
 */
import { Buffer } from "node:buffer";
import { accessSync, constants as fsConstants, statSync } from "node:fs";
import { constants } from "node:os";
import { resolve } from "node:path";
import { type EnvEntry, envEntriesOnce } from "../env/env-input.js";
import { displayName, systemError } from "../errors.js";
import { footprintOf, limitsWithChildStack, probeLimits } from "../limits.js";
import type { RawContain } from "../native.js";
import type { CaptureRequest, EngineRequest } from "./engine.js";
import { childStackSoft, type ExecControls } from "./exec-controls.js";
import { outputLimit } from "./output-limit.js";
import { resolveFile } from "./resolve-file.js";
import { resolveSandbox } from "./sandbox.js";
import { type OffendingString, SpawnError } from "./spawn-errors.js";
import { type NormalizedOptions, normalizeOptions, type SpawnOptions } from "./spawn-options.js";

/** A validated call: the normalized options, the whole argv and the rendered environment. */
export interface SpawnInput {
  readonly file: string;
  readonly options: NormalizedOptions;
  readonly cwd: string | undefined;
  readonly argv: ReadonlyArray<string | Buffer>;
  readonly entries: readonly EnvEntry[];
}

/** Validates a call to `api`; throws TypeError or InvalidEnvError, never anything else. */
export function spawnInput(
  api: string,
  file: unknown,
  args: unknown,
  options: SpawnOptions | undefined,
): SpawnInput {
  if (typeof file !== "string" || file.includes("\0")) {
    throw new TypeError(`${api}: file must be a string without NUL`);
  }
  if (!Array.isArray(args)) throw new TypeError(`${api}: args must be an array`);
  for (let i = 0; i < args.length; i++) {
    const arg: unknown = args[i];
    if (typeof arg !== "string" && !Buffer.isBuffer(arg)) {
      throw new TypeError(`${api}: args[${i}] must be a string or Buffer`);
    }
  }
  const o = normalizeOptions(options);
  // A frozen env (a runtime's snapshot, a host's base env) is validated once, not per spawn.
  const entries = envEntriesOnce(o.env, `${api}: options.env`);
  return {
    file,
    options: o,
    cwd: o.cwd === undefined ? undefined : resolve(o.cwd),
    argv: [o.argv0 ?? file, ...(args as ReadonlyArray<string | Buffer>)],
    entries,
  };
}

const LARGEST = 5;

function offenders(
  argv: ReadonlyArray<string | Buffer>,
  entries: readonly EnvEntry[],
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

/**
 * The request for an engine, with a contained step's cgroup (`contain`,
 * from planContainment). Throws what resolving `file` throws, or a
 * SpawnError when the exec would not fit the kernel's limits. One object
 * literal of one shape for every spawn (a spread copy with a key added made
 * V8 build a new hidden class per spawn).
 */
export function engineRequest(input: SpawnInput, contain: RawContain | undefined): EngineRequest {
  const o = input.options;
  // The parent's PATH is read only for a file that needs a search.
  const searchPath = input.file.includes("/") ? undefined : (o.path ?? process.env["PATH"]);
  const file = resolveFile(input.file, searchPath, input.cwd ?? process.cwd());
  // The child's own stack limit, when it sets one, sizes its exec (rlimits.stack).
  const limits = limitsWithChildStack(probeLimits(), childStackSoft(o.controls));
  const fit = footprintOf(file, input.argv, input.entries, limits, input.cwd);
  if (!fit.fits)
    throw new SpawnError(file, fit, offenders(input.argv, input.entries, fit.oversized));
  return {
    file,
    argv: input.argv,
    argvBytes: fit.argvBytes,
    entries: input.entries,
    cwd: input.cwd,
    stdio: o.stdio,
    setsid: o.setsid,
    setpgroup: o.processGroup,
    cleanup: o.cleanup,
    controls: o.controls,
    sandbox:
      o.sandbox === undefined
        ? undefined
        : resolveSandbox(o.sandbox, undefined, changesCredentials(o.controls)),
    capture: o.buffer ? captureRequest(o.stdio, outputLimit(o.maxBuffer, o.encoding)) : undefined,
    contain,
  };
}

/** Whether the child changes its credentials (the exec helper's child path). */
function changesCredentials(controls: ExecControls | undefined): boolean {
  return (
    controls !== undefined &&
    (controls.uid !== undefined || controls.gid !== undefined || controls.groups !== undefined)
  );
}

const STDOUT_AND_STDERR: readonly number[] = [1, 2];
const STDOUT: readonly number[] = [1];
const STDERR: readonly number[] = [2];

/** The output a run captures: piped stdout and stderr. */
function captureRequest(
  stdio: NormalizedOptions["stdio"],
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
export function explainCwd(error: unknown, cwd: string | undefined): unknown {
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
  const chdir = systemError(errno, "chdir", cwd, "cwd");
  chdir.cause = error;
  return chdir;
}
