/**
 * The options of `spawn` and their validation. Throws TypeError for anything
 * of the wrong type (never coerces); applies the documented defaults.
 */
import { Buffer } from "node:buffer";
import type { EnvInput } from "../env/env-input.js";
import { knownKeys, ownOptions } from "../known-options.js";
import { type ContainOption, type NormalizedContain, normalizeContain } from "./contain.js";
import type { StdioSlot } from "./engine.js";
import {
  type ExecControlOptions,
  type ExecControls,
  normalizeExecControls,
} from "./exec-controls.js";
import { KernelPipe, pipeSlotFd } from "./kernel-pipe.js";
import { type NormalizedSandbox, normalizeSandbox, type SandboxOptions } from "./sandbox.js";
import { signalNumber } from "./signals.js";
import { type InputStream, type StreamInput, streamInput } from "./stream-input.js";

/**
 * One child fd as spawn takes it: a StdioSlot, or a pipe between two
 * children (createPipe(): its read end as stdin, its write end as stdout or
 * stderr; kernel-pipe.ts).
 */
export type StdioOption = StdioSlot | KernelPipe;

/** Also takes the exec controls (uid, gid, groups, umask, rlimits, nice, …): see exec-controls.ts. */
export interface SpawnOptions extends ExecControlOptions {
  /** The child's WHOLE environment. Nothing is inherited or added. Default: {} (empty). */
  env?: EnvInput;
  /** The search path for a `file` without "/". Default: the parent's process.env.PATH. */
  path?: string;
  /** Confine the child: where it may write, read and execute, and whether it has network (docs/sandbox.md). */
  sandbox?: SandboxOptions;
  /** The child's working directory (resolved against process.cwd()). Default: inherited. */
  cwd?: string;
  /** argv[0] as the child sees it. Default: `file` as given. */
  argv0?: string | Buffer;
  /**
   * Per child fd: "pipe" | "ignore" | "inherit" | a parent fd | a pipe from
   * createPipe() (slots 0-2). Default: ["ignore", "pipe", "pipe"] ("pipe"
   * stdin when `input` is set).
   */
  stdio?: StdioSlot | readonly StdioOption[];
  /**
   * Written to the child's stdin, which is then closed. A string or bytes, or
   * a stream: a Node Readable, a web ReadableStream, or an (async) iterable of
   * strings and bytes, written as it comes with backpressure (a failing
   * stream ends the run with failure "input"). Forces stdin to "pipe".
   */
  input?: string | Uint8Array | InputStream;
  /** How captured output is returned: a Buffer encoding or "buffer". Default "utf8". */
  encoding?: BufferEncoding | "buffer";
  /** Capture piped stdout/stderr into the result. Default true. */
  buffer?: boolean;
  /** Bytes captured per stream before the child is killed (failure "maxBuffer"). Default 64 MiB. */
  maxBuffer?: number;
  /** Milliseconds before killSignal is sent (to the process group). Default: none. */
  timeout?: number;
  /** Signal for timeout/abort/maxBuffer. Default "SIGTERM". */
  killSignal?: string | number;
  /** Milliseconds between killSignal and SIGKILL. Default 2000. */
  killGraceMs?: number;
  /** Aborting sends killSignal like a timeout. */
  signal?: AbortSignal;
  /** Start the child in a new session (setsid). Default false; always for a sandboxed child. */
  setsid?: boolean;
  /** Start the child in its own process group. Default: true when `timeout`, `signal` or `cleanup` is set. */
  processGroup?: boolean;
  /**
   * Kill the child's process group (SIGKILL) when the host ends, however it
   * ends — SIGKILL and the OOM killer included — through a watchdog process
   * (see docs/spawn.md, "When the host dies"). Needs a group of its own
   * (`processGroup` or `setsid`). Default false.
   */
  cleanup?: boolean;
  /**
   * Kill every process the child starts — `setsid` daemons and double forks
   * included — when it ends, times out, is aborted or the host dies, and
   * settle only then; limits over the whole tree (docs/containment.md).
   * Default false.
   */
  contain?: ContainOption;
  /** Reject on a failed run. Default true; false resolves with `failure` set. */
  reject?: boolean;
  /** Keep the host alive until the child exits. Default true. */
  ref?: boolean;
}

/** The keys spawn accepts; any other key is a TypeError. One per line: add new options here. */
export const SPAWN_OPTION_KEYS = knownKeys<SpawnOptions>({
  env: true,
  path: true,
  cwd: true,
  argv0: true,
  stdio: true,
  input: true,
  encoding: true,
  buffer: true,
  maxBuffer: true,
  timeout: true,
  killSignal: true,
  killGraceMs: true,
  signal: true,
  setsid: true,
  processGroup: true,
  cleanup: true,
  contain: true,
  reject: true,
  ref: true,
  uid: true,
  gid: true,
  groups: true,
  umask: true,
  rlimits: true,
  nice: true,
  noNewPrivileges: true,
  parentDeathSignal: true,
  sandbox: true,
});

export interface NormalizedOptions {
  readonly env: EnvInput;
  /** options.path; undefined means the parent's PATH (read by engineRequest when a search needs it). */
  readonly path: string | undefined;
  readonly cwd: string | undefined;
  readonly argv0: string | Buffer | undefined;
  /** Frozen: a shared list for the common shapes (one string for every slot, the default). */
  readonly stdio: readonly StdioSlot[];
  readonly input: string | Buffer | StreamInput | undefined;
  readonly encoding: BufferEncoding | "buffer";
  readonly buffer: boolean;
  readonly maxBuffer: number;
  readonly timeout: number | undefined;
  readonly killSignal: number;
  readonly killGraceMs: number;
  readonly signal: AbortSignal | undefined;
  readonly setsid: boolean;
  readonly processGroup: boolean;
  readonly cleanup: boolean;
  /** undefined when the child is not contained. */
  readonly contain: NormalizedContain | undefined;
  readonly reject: boolean;
  readonly ref: boolean;
  /** undefined when no exec control is set. */
  readonly controls: ExecControls | undefined;
  readonly sandbox: NormalizedSandbox | undefined;
}

const DEFAULT_MAX_BUFFER = 64 * 1024 * 1024;

/**
 * The default environment, an empty one: frozen and shared, so its entries
 * and its packed envp are made once (envEntriesOnce), not per spawn.
 */
const NO_ENV: EnvInput = Object.freeze({});

function fail(message: string): never {
  throw new TypeError(`spawn: ${message}`);
}

function bool(value: unknown, name: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") fail(`options.${name} must be a boolean`);
  return value;
}

function duration(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    fail(`options.${name} must be a non-negative number of milliseconds`);
  }
  return value;
}

function stdioSlot(slot: unknown, index: number): StdioSlot {
  if (slot === "pipe" || slot === "ignore" || slot === "inherit") return slot;
  if (typeof slot === "number" && Number.isInteger(slot) && slot >= 0) return slot;
  if (slot instanceof KernelPipe) {
    const fd = pipeSlotFd(slot, index);
    if (typeof fd === "string") fail(`options.stdio[${index}] ${fd}`);
    return fd;
  }
  fail(`options.stdio[${index}] must be "pipe", "ignore", "inherit", an fd or a pipe (createPipe)`);
}

/** The stdio lists most spawns ask for, made once: a string for every slot, the default. */
const SAME_SLOTS: Readonly<Record<string, readonly StdioSlot[]>> = {
  pipe: Object.freeze<StdioSlot[]>(["pipe", "pipe", "pipe"]),
  ignore: Object.freeze<StdioSlot[]>(["ignore", "ignore", "ignore"]),
  inherit: Object.freeze<StdioSlot[]>(["inherit", "inherit", "inherit"]),
};
const DEFAULT_SLOTS: readonly StdioSlot[] = Object.freeze<StdioSlot[]>(["ignore", "pipe", "pipe"]);
const DEFAULT_SLOTS_WITH_INPUT = SAME_SLOTS["pipe"]!;

function stdioSlots(value: unknown, hasInput: boolean): readonly StdioSlot[] {
  if (value === undefined) return hasInput ? DEFAULT_SLOTS_WITH_INPUT : DEFAULT_SLOTS;
  if (typeof value === "string") {
    const same = stdioSlot(value, 0) as string;
    if (!hasInput || same === "pipe") return SAME_SLOTS[same]!;
    if (same !== "ignore") fail("options.input needs stdin to be a pipe");
    return Object.freeze<StdioSlot[]>(["pipe", "ignore", "ignore"]);
  }
  if (!Array.isArray(value)) fail("options.stdio must be a string or an array");
  const slots: StdioSlot[] = [];
  // A hole is no slot: never an index inherited from a prototype.
  for (let i = 0; i < value.length; i++) {
    slots.push(stdioSlot(Object.hasOwn(value, i) ? value[i] : undefined, i));
  }
  while (slots.length < 3) slots.push("ignore");
  if (hasInput && slots[0] !== "pipe") {
    if (slots[0] !== "ignore") fail("options.input needs stdin to be a pipe");
    slots[0] = "pipe";
  }
  return Object.freeze(slots);
}

/**
 * Normalized options by the frozen options object they came from: a caller
 * that passes the same frozen object again (a runtime's defaults, a host's
 * constant) gets them without a second validation. Only an object nothing
 * can change is kept (see reusable()).
 */
const normalizedOf = new WeakMap<object, NormalizedOptions>();
/** The normalized options of `undefined` (no options at all), made at the first such spawn. */
let noOptions: NormalizedOptions | undefined;

/**
 * Whether normalizing `options` again would give the same result: a frozen
 * plain object whose every property is data (no getter), and every value a
 * primitive, a frozen list of stdio names and fds, or the env (kept by
 * reference only: its entries are read per spawn, envEntriesOnce). A value that can change or carries state (a Buffer, a
 * stream, a pipe, an AbortSignal, a nested settings object) is read afresh
 * every time.
 */
function reusable(options: object): boolean {
  if (!Object.isFrozen(options)) return false;
  // Only the object's own data properties are read (no inherited option, no getter).
  const prototype: unknown = Object.getPrototypeOf(options);
  if (prototype !== Object.prototype && prototype !== null) return false;
  for (const key of Object.keys(options)) {
    // A uid or gid drops a root host's groups: that depends on the host's uid at the spawn.
    if (key === "uid" || key === "gid") return false;
    const descriptor = Object.getOwnPropertyDescriptor(options, key);
    if (descriptor === undefined || !("value" in descriptor)) return false;
    const value: unknown = descriptor.value;
    if (typeof value === "function") return false;
    if (value === null || typeof value !== "object" || key === "env") continue;
    if (key !== "stdio" || !Array.isArray(value) || !Object.isFrozen(value)) return false;
    for (const slot of value)
      if (typeof slot !== "string" && typeof slot !== "number") return false;
  }
  return true;
}

/**
 * Validates `options` (TypeError for anything wrong) and applies the
 * defaults. The result is frozen; the same frozen options object (and no
 * options at all) gives the same result object again (normalizedOf).
 */
export function normalizeOptions(options: SpawnOptions | undefined): NormalizedOptions {
  if (options === undefined) {
    noOptions ??= normalizeFresh({});
    return noOptions;
  }
  if (options === null || typeof options !== "object") fail("options must be an object");
  const known = normalizedOf.get(options);
  if (known !== undefined) return known;
  const normalized = normalizeFresh(options);
  if (reusable(options)) normalizedOf.set(options, normalized);
  return normalized;
}

function normalizeFresh(options: SpawnOptions): NormalizedOptions {
  // Own properties only, each read once: nothing below reads `options` again.
  const o = ownOptions(options, SPAWN_OPTION_KEYS, "spawn");
  if (o.path !== undefined && (typeof o.path !== "string" || o.path.includes("\0"))) {
    fail("options.path must be a string without NUL");
  }
  if (
    o.cwd !== undefined &&
    (typeof o.cwd !== "string" || o.cwd.length === 0 || o.cwd.includes("\0"))
  ) {
    fail("options.cwd must be a non-empty string without NUL");
  }
  if (o.argv0 !== undefined && typeof o.argv0 !== "string" && !Buffer.isBuffer(o.argv0)) {
    fail("options.argv0 must be a string or Buffer");
  }
  const stream = streamInput(o.input);
  if (
    o.input !== undefined &&
    typeof o.input !== "string" &&
    !(o.input instanceof Uint8Array) &&
    stream === undefined
  ) {
    fail("options.input must be a string, a Uint8Array, a stream or an (async) iterable");
  }
  // A Uint8Array is viewed as a Buffer (no copy), so the rest sees one type.
  const input =
    stream ??
    (o.input instanceof Uint8Array && !Buffer.isBuffer(o.input)
      ? Buffer.from(o.input.buffer, o.input.byteOffset, o.input.byteLength)
      : (o.input as string | Buffer | undefined));
  const encoding = o.encoding ?? "utf8";
  if (encoding !== "buffer" && !Buffer.isEncoding(encoding)) fail("options.encoding is unknown");
  const maxBuffer = o.maxBuffer ?? DEFAULT_MAX_BUFFER;
  if (typeof maxBuffer !== "number" || !(maxBuffer > 0)) fail("options.maxBuffer must be > 0");
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) {
    fail("options.signal must be an AbortSignal");
  }
  const timeout = duration(o.timeout, "timeout");
  const sandbox = normalizeSandbox("spawn", o.sandbox);
  // A sandboxed child never keeps the host's controlling terminal
  // (docs/sandbox.md): it always starts a session of its own.
  const setsid = bool(o.setsid, "setsid", false) || sandbox !== undefined;
  const cleanup = bool(o.cleanup, "cleanup", false);
  const processGroup = bool(
    o.processGroup,
    "processGroup",
    !setsid && (timeout !== undefined || o.signal !== undefined || cleanup),
  );
  if (cleanup && !setsid && !processGroup) {
    fail("options.cleanup needs a process group of the child's own (processGroup or setsid)");
  }
  return Object.freeze({
    env: o.env ?? NO_ENV,
    path: o.path,
    cwd: o.cwd,
    argv0: o.argv0,
    stdio: stdioSlots(o.stdio, input !== undefined),
    input,
    encoding,
    buffer: bool(o.buffer, "buffer", true),
    maxBuffer,
    timeout,
    killSignal: signalNumber(o.killSignal ?? "SIGTERM", "spawn: options.killSignal"),
    killGraceMs: duration(o.killGraceMs, "killGraceMs") ?? 2000,
    signal: o.signal,
    setsid,
    processGroup,
    cleanup,
    contain: normalizeContain("spawn", o.contain),
    reject: bool(o.reject, "reject", true),
    ref: bool(o.ref, "ref", true),
    controls: normalizeExecControls(o),
    sandbox,
  });
}
