/**
 * The one loader of the native addon: lazy, cached, typed, and explicit about
 * why it could not load. The file is chosen by native-locate.ts (architecture
 * and C library checked); a kernel without what the addon needs turns it off
 * here, at load, with the reason.
 *
 * The addon is off when EXACTSPAWN_NATIVE is "0"/"off"/"false" or after
 * `disableNative()`; then every caller takes the documented fallback path.
 * EXACTSPAWN_NATIVE=required turns a load failure into a thrown error.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { firstLine } from "./errors.js";
import { currentRuntime, type ExitWatch, wantsHostLoop } from "./exit-watch-mode.js";
import { hostLoggerSet, libraryChild, logger, stderrLogger } from "./log.js";
import { hostLibc, locateAddon } from "./native-locate.js";
import { loadedFile, mappedNow, openFirst } from "./native-open.js";

/** One probed field: a number, "unlimited", or the errno name of a failed read. */
export interface RawProbedValue {
  value: number | null;
  unlimited: boolean;
  error: string | null;
}

export interface RawProbe {
  argMax: RawProbedValue;
  stackSoft: RawProbedValue;
  stackHard: RawProbedValue;
  pageSize: RawProbedValue;
}

/** What a native child reports when it has been reaped (signal as "SIGTERM", or null). */
export interface RawChildExit {
  exitCode: number | null;
  signal: string | null;
  userCpuMicros: number;
  systemCpuMicros: number;
  /** Peak RSS in KiB, or null when it did not exceed the host's own peak (see docs/spawn.md). */
  maxRssKiB: number | null;
  /** With `capture`: output[slot] is what the addon read from that pipe (null for other slots and taken-over ones). */
  output?: ReadonlyArray<Buffer | null>;
  /** A contained step: what its whole tree used, from its cgroup (null where the kernel did not say). */
  tree?: RawTreeUsage;
  /**
   * When the exit was seen (CLOCK_MONOTONIC ms): the reap, or the deadline
   * keeper's look after an ending's signal when that came first; absent
   * from an addon built before it.
   */
  exitedAt?: number | null;
}

/**
 * cpu.stat, memory.peak, memory.events and pids.events of a contained step's
 * cgroup, read before its removal (native/tree_usage.h): null where the
 * kernel did not say (the controller not enabled).
 */
export interface RawTreeUsage {
  readonly userCpuMicros: number | null;
  readonly systemCpuMicros: number | null;
  readonly memoryPeakBytes: number | null;
  /** memory.events oom_kill. */
  readonly oomKills: number | null;
  /** memory.events max. */
  readonly memoryMaxEvents: number | null;
  /** memory.events oom. */
  readonly oomEvents: number | null;
  /** pids.events max. */
  readonly pidsMaxEvents: number | null;
  /** cpu.stat throttled_usec. */
  readonly cpuThrottledMicros: number | null;
  /** cpu.stat nr_throttled. */
  readonly cpuThrottledPeriods: number | null;
}

/**
 * A contained step: a cgroup made under `parent` (native/core/cgroup.h) with
 * these limits, or a PID namespace (with a user namespace: "pid+user") whose
 * init is the exec helper (native/helper/init.h).
 */
export type RawContain =
  | {
      readonly parent: string;
      /** The controllers the host's sub-tree enables for its steps where the parent delegates them. */
      readonly controllers: readonly string[];
      /** [controller, file, value], e.g. ["pids", "pids.max", "64"]. */
      readonly limits?: ReadonlyArray<readonly [string, string, string]>;
    }
  | { readonly namespace: "pid" | "pid+user" };

/**
 * A watched child. `kill`/`killGroup` return 0 or a negative errno (-ESRCH once
 * reaped: the pidfd is then gone, so a reused pid is never signalled).
 */
export interface RawChildHandle {
  readonly pid: number;
  kill(signal: number): number;
  /** kill(-pid, signal) while the leader is unreaped, else -ESRCH; only for a child leading its group. */
  killGroup(signal: number): number;
  /** kill(-pid, signal) when the leader has exited, just before the reap; 0 or -ESRCH once reaped. */
  killGroupAtExit?(signal: number): number;
  /** Once reaped (now, if it is), stop reading the captured pipes and deliver; may deliver before it returns. */
  endCaptureAtExit?(): void;
  /**
   * Begins the run's ending now (the deadline plan's endSignal, the group's
   * signal at the leader's exit, finalSignal after the grace, all from the
   * addon's deadline keeper) unless one has begun; the first ending. null
   * when spawn was given no deadline.
   */
  endNow?(): RawEndingRecord | null;
  /** The first ending so far (the keeper begins one at the timeout, off this thread), or null. */
  ending?(): RawEndingRecord | null;
  ref(): void;
  unref(): void;
  hasRef(): boolean;
  /** The parent's end of each uncaptured pipe slot (-1 elsewhere); absent when there is none. */
  readonly fds?: readonly number[];
  /**
   * Stops the addon reading a captured slot: its fd (now the caller's; -1 once
   * the pipe has ended) and the bytes read so far, or null when the slot is not
   * (or no longer) captured. May deliver the exit before it returns.
   */
  takeOver?(slot: number): { fd: number; bytes: Buffer } | null;
}

/**
 * Set in the child before exec; its presence selects the addon's own child
 * path (clone + execve) instead of posix_spawn, even when empty.
 */
export interface RawExecControls {
  uid?: number;
  gid?: number;
  groups?: readonly number[];
  umask?: number;
  /** [name, soft, hard]; Infinity is RLIM_INFINITY. */
  rlimits?: ReadonlyArray<readonly [string, number, number]>;
  nice?: number;
  noNewPrivileges?: boolean;
  parentDeathSignal?: number;
}

/** A resolved sandbox for the child path (see src/spawn/sandbox.ts): absolute real paths. */
export interface RawSandbox {
  readAll: boolean;
  read: readonly string[];
  write: readonly string[];
  exec: readonly string[];
  execWritable: boolean;
  network: boolean;
  /** Build and apply the Landlock ruleset. */
  landlock: boolean;
  /** Install the seccomp filter (native/core/seccomp_filter.h). */
  seccomp: boolean;
  /** Empty every capability set before exec (bounding, ambient, inheritable, permitted, effective). */
  dropCapabilities: boolean;
  /** A private mount namespace, read-only except `write` (native/core/mount_view.h). */
  readOnlyView: boolean;
  /** The `write` paths the view clones writable, each once, none beneath another (src/spawn/sandbox-view.ts). */
  viewPaths: readonly string[];
  /** Make the view in a user namespace too (a host without CAP_SYS_ADMIN). */
  userNamespace: boolean;
}

/** The one options object `spawn` takes; every field is type-checked natively. */
export interface RawSpawnOptions {
  file: string;
  /**
   * The strings, or one Buffer of NUL-terminated strings packed in order with
   * their count in argvCount (the addon refuses a count that does not match).
   */
  argv: ReadonlyArray<string | Buffer> | Buffer;
  argvCount?: number | undefined;
  /** As argv, with envpCount. */
  envp: ReadonlyArray<string | Buffer> | Buffer;
  envpCount?: number | undefined;
  cwd?: string | null | undefined;
  /**
   * Child fd i ← parent fd stdio[i]; -1 opens /dev/null; -2 makes a pipe (the
   * child reads slot 0's and writes the others'). At least 3 slots; others closed.
   */
  stdio: readonly number[];
  /** Pipe slots (not 0) the addon reads itself; their bytes arrive as `exit.output`. */
  capture?: readonly number[] | undefined;
  /** Bytes kept per captured pipe (required with `capture`); beyond it the pipe is closed. */
  captureLimit?: number | undefined;
  /** Called with the slot when a captured pipe went over captureLimit (required with `capture`). */
  onOverflow?: ((this: RawChildHandle, slot: number) => void) | undefined;
  setsid?: boolean | undefined;
  setpgroup?: boolean | undefined;
  /** With it, failures name the failing call (syscall "setuid", "setrlimit", "chdir", "execve"…). */
  controls?: RawExecControls | undefined;
  /** Confines the child (implies the child path). */
  sandbox?: RawSandbox | undefined;
  /** Register the child's group (needs setsid or setpgroup) with the watchdog; needs startWatchdog() first. */
  cleanup?: boolean | undefined;
  /**
   * The run's deadline plan (captureLimit is not read here), executed by the
   * addon's deadline keeper on a thread of its own: the timeout holds while
   * this thread is busy.
   */
  deadline?: RawDeadline | undefined;
  /** Run the child in a fresh cgroup of its own (implies the child path; needs startWatchdog() first). */
  contain?: RawContain | undefined;
  /** Called once on the loop thread; an Error (code ECHILD…) if the pid was reaped elsewhere. */
  onExit: (this: RawChildHandle, exit: RawChildExit | Error) => void;
}

/** The rarely given part of a spawn: the positional call's last argument. */
export type RawSpawnMore = Pick<
  RawSpawnOptions,
  "capture" | "captureLimit" | "onOverflow" | "controls" | "sandbox" | "cleanup" | "contain"
>;

/**
 * The exit as the positional call delivers it: its fields as arguments
 * (output and tree undefined where there are none; exitedAt as
 * RawChildExit's), or one Error.
 */
export type RawExitCallback = (
  this: RawChildHandle,
  exitCode: number | null | Error,
  signal?: string | null,
  userCpuMicros?: number,
  systemCpuMicros?: number,
  maxRssKiB?: number | null,
  output?: ReadonlyArray<Buffer | null>,
  tree?: RawTreeUsage,
  exitedAt?: number | null,
) => void;

/** spawn() in both forms: one options object, or positional (native/spawn_args.h; the engine's). */
export interface RawSpawn {
  (options: RawSpawnOptions): RawChildHandle;
  (
    file: string,
    argv: Buffer,
    argvCount: number,
    envp: Buffer,
    envpCount: number,
    cwd: string | undefined,
    stdio: readonly number[],
    /** 1 setsid, 2 setpgroup, 4 posix_spawn(3) for a child without controls (else the child path). */
    flags: number,
    onExit: RawExitCallback,
    /** The run's deadline plan as numbers (nativeDeadlineNumbers in src/spawn/deadline-plan.ts). */
    deadline?: Float64Array,
    more?: RawSpawnMore,
  ): RawChildHandle;
}

/** A run's first ending as the addon's deadline keeper recorded it. */
export interface RawEndingRecord {
  /** The timeout began it (else endNow()). */
  readonly byDeadline: boolean;
  /** The child had not exited when it began (only then does it count). */
  readonly leaderRunning: boolean;
  /** When the end signal was sent (CLOCK_MONOTONIC ms, fractional), or null when none was. */
  readonly at: number | null;
}

/** The one options object `spawnSync` takes: spawn's shared fields plus the run's bounds. */
export interface RawSpawnSyncOptions {
  file: string;
  /** As for spawn: strings, or one packed Buffer with argvCount. */
  argv: ReadonlyArray<string | Buffer> | Buffer;
  argvCount?: number | undefined;
  envp: ReadonlyArray<string | Buffer> | Buffer;
  envpCount?: number | undefined;
  cwd?: string | null | undefined;
  /** As for spawn, but only slots 0–2 may be -2: slot 0 exactly when `input` is set; 1 and 2 are captured. */
  stdio: readonly number[];
  input?: Buffer | undefined;
  /** The run's deadline plan, executed as given (src/spawn/deadline-plan.ts). */
  deadline: RawDeadline;
  setsid?: boolean | undefined;
  setpgroup?: boolean | undefined;
  /** As for spawn: starts the child through the addon's own child path. */
  controls?: RawExecControls | undefined;
  sandbox?: RawSandbox | undefined;
  contain?: RawContain | undefined;
}

/**
 * A deadline plan as the blocking loop executes it (nativeDeadline in
 * src/spawn/deadline-plan.ts): whole milliseconds, -1 for never, signal numbers.
 */
export interface RawDeadline {
  /** After the start, an ending begins; -1: never. */
  readonly timeoutMs: number;
  /** Sent when an ending begins, while the leader is unreaped. */
  readonly endSignal: number;
  /** Signals go to the child's group (needs setsid or setpgroup), else to the child. */
  readonly toGroup: boolean;
  /** From an ending's start to finalSignal and to the end of reading output. */
  readonly graceMs: number;
  readonly finalSignal: number;
  /** Sent to the rest of the group at the leader's exit once an ending began; 0: none. */
  readonly groupSignalAtExit: number;
  /** Bytes kept per captured pipe; one more begins a "maxBuffer" ending. */
  readonly captureLimit: number;
}

/** What a synchronous run returns: the reaped exit, the captured output and its endings, in order. */
export interface RawSyncResult extends RawChildExit {
  readonly pid: number;
  readonly output: ReadonlyArray<Buffer | null>;
  readonly endings: ReadonlyArray<{
    readonly cause: "timeout" | "maxBuffer";
    readonly leaderRunning: boolean;
  }>;
  /** When the first ending's signal went (CLOCK_MONOTONIC ms), else null; absent from older builds. */
  readonly killedAt?: number | null;
}

/** What the addon exports. Later capabilities are optional so fakes can stay small. */
export interface NativeBinding {
  readonly sourceStamp: string;
  readonly napiVersion: number;
  probe(): RawProbe;
  /** posix_spawn + pidfd watch. Throws a Node-style system error with `syscall` and `step` (errors.ts). */
  spawn?: RawSpawn;
  /** posix_spawn, then poll(2) on this thread until the child is reaped; no event loop turn. */
  spawnSync?(options: RawSpawnSyncOptions): RawSyncResult;
  /** What the kernel can enforce for `sandbox`: Landlock's ABI (0: none) and the seccomp filter. */
  sandboxSupport?(): {
    landlockAbi: number;
    seccompFilter: boolean;
    readOnlyView?: "available" | "user-namespace" | "kernel" | "privilege";
  };
  /** The seccomp program a sandboxed child installs on `arch`, as [code, jt, jf, k] rows (for tests). */
  sandboxFilter?(options: {
    arch: "x86_64" | "aarch64";
    network: boolean;
    execWritable: boolean;
  }): Array<[number, number, number, number]>;
  /** pipe2(O_CLOEXEC) → [readFd, writeFd]. */
  pipe?(): [number, number];
  /** close(2) → 0 or -errno; for fds no Node stream owns (fs.closeSync warns in workers). */
  closeFd?(fd: number): number;
  /**
   * Starts the process-wide watchdog unless it runs (the first call fixes the
   * program) and returns its pid. Throws a system error naming the call that failed, `step: "cleanup"`.
   */
  startWatchdog?(program: { file: string; argv: readonly string[] }): number;
  /** Where this process stands in the cgroup v2 hierarchy (mountinfo, /proc/self/cgroup), or why not. */
  probeContainment?(): { mount: string; own: string } | { errno: number; code: string };
  /** Whether a contained step can run in a PID namespace (with a user namespace: userNamespace). */
  probePidNamespace?(): {
    works: boolean;
    userNamespace: boolean;
    errno?: number;
    code?: string;
    syscall?: string | null;
    /** "helper": the exec helper (the namespace's init) could not be started; else "contain". */
    step?: string;
  };
  /**
   * What the running kernel offers of what the addon needs, probed with
   * harmless calls: null where the call works, else the errno name it failed
   * with (ENOSYS: too old a kernel; EPERM: a seccomp profile refuses it).
   */
  kernelSupport?(): { pidfdOpen: string | null; closeRange: string | null };
  /** memfd_create + write + seal → a close-on-exec fd at offset 0 (syscall "memfd_create" on failure). */
  sealedMemfd?(name: string, bytes: Buffer): number;
  /**
   * For tests: reapRetries counts reap attempts that found a child not waitable yet (a tracer
   * holds it); invalidWatchMoves counts refused moves of a watch's lifetime (always 0 unless
   * the addon has a bug; refused, never fatal).
   */
  debugCounters?(): {
    reapRetries: number;
    invalidWatchMoves: number;
    deadlinesPending?: number;
    /** Children started by clone3 (a contained step created in its cgroup). */
    clone3Children?: number;
  };
  /** For tests: the exit watch's thread treats its next `count` hand-overs to JavaScript as refused. */
  debugRefuseNotifies?(count: number): void;
  /** For tests: the next `count` clone3 calls that ask CLONE_PIDFD fail with EINVAL, as a kernel refusing the flag. */
  debugRefuseClone3Pidfd?(count: number): void;
  /**
   * For tests: the first `count` (0-3) of each exec helper start's exec attempts (execveat,
   * /proc/self/fd/N, the helper's path) fail with `errno`, as a kernel refusing them.
   */
  debugRefuseHelperExec?(errno: number, count: number): void;
  /**
   * For tests: the next `count` (0-3) watchdog launches each hold the thread that made them
   * right after the watchdog's spawn, forever (the test then SIGKILLs the host).
   */
  debugHoldWatchdogLaunch?(count: number): void;
  /**
   * Asks for the host's event loop to wait for exits (true) or for the addon's
   * own thread (false); call before the first spawn. Returns what is used.
   */
  useHostLoop?(wanted: boolean): ExitWatch;
  /**
   * Where the exec helper is (the loader passes the one beside the loaded
   * `.node`, once). It is opened and checked at its first use, and copied
   * into memory where its file cannot be exec'd.
   */
  setHelperPath?(path: string): void;
  /** How the exec helper runs (opening it now if not yet; see `setHelperPath`). */
  helperStatus?(): HelperStatus;
  /** prctl(PR_SET_DUMPABLE, flag) for this process → 0 or -errno (src/host-dumpable.ts decides). */
  setDumpable?(flag: boolean): number;
  /** prctl(PR_GET_DUMPABLE): 0, 1, 2, or -errno. */
  dumpable?(): number;
}

/**
 * How the exec helper (the small static program that starts children that
 * change credentials or enter a user namespace) runs: from its own file, from
 * an in-memory copy (its file is not executable, e.g. on a `noexec` mount),
 * or not at all (`error` says why: code, errno, syscall, path, step "helper").
 */
export interface HelperStatus {
  readonly path: string;
  readonly run: "file" | "memory" | "unavailable" | "unset";
  readonly error?: Error;
  /**
   * Why it cannot run where `error`'s code alone does not say: built for
   * another architecture ("built for aarch64, this process runs x86_64"), or
   * the build's note of why it left the helper out (no static C library).
   */
  readonly reason?: string;
}

/** The exec helper's file name, beside the addon's `.node` (build/Release, prebuilds/<platform>). */
export const HELPER_NAME = "exactspawn-helper";

export interface NativeStatus {
  readonly loaded: boolean;
  /** Why the addon is not in use; undefined when it is. */
  readonly reason: string | undefined;
  /** e.g. "linux-x64 glibc-2.36 node-20.20.2 abi-115". */
  readonly platform: string;
  /** Who waits for exits (src/exit-watch-mode.ts); undefined when the addon is not in use. */
  readonly exitWatch?: ExitWatch | undefined;
  /**
   * Where the exec helper is and how it runs (read when accessed: that opens
   * it); undefined when the addon is not in use.
   */
  readonly helper?: HelperStatus | undefined;
  /** The addon file the dynamic loader mapped (read from /proc/self/maps); undefined when not in use or not seen. */
  readonly file?: string | undefined;
}

export const PACKAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

let cached: { binding: NativeBinding | null; status: NativeStatus } | undefined;
let forcedOff = false;

function platformTuple(): string {
  const report = process.report?.getReport?.() as
    | { header?: { glibcVersionRuntime?: string } }
    | undefined;
  const glibc = report?.header?.glibcVersionRuntime;
  const libc = glibc ? `glibc-${glibc}` : (hostLibc() ?? "libc-unknown");
  return `${process.platform}-${process.arch} ${libc} node-${process.versions.node} abi-${process.versions.modules}`;
}

function envForcesOff(): boolean {
  const v = (process.env["EXACTSPAWN_NATIVE"] ?? "").toLowerCase();
  return v === "0" || v === "off" || v === "false";
}

/** The kernel calls the addon cannot do without, with the release that added each. */
const KERNEL_NEEDS = [
  ["pidfdOpen", "pidfd_open (Linux 5.3)"],
  ["closeRange", "close_range (Linux 5.9)"],
] as const;

/** Why the running kernel cannot carry the addon, or undefined when it can. */
function kernelShortfall(binding: NativeBinding): string | undefined {
  const support = binding.kernelSupport?.();
  if (support === undefined) return undefined;
  const failing = KERNEL_NEEDS.filter(([key]) => support[key] !== null).map(
    ([key, what]) => `${what} fails with ${support[key]}`,
  );
  return failing.length === 0
    ? undefined
    : `the kernel cannot run the addon: ${failing.join(", ")}`;
}

/**
 * The one notice of an addon that did not load, at `error` (the default level):
 * through the host's logger when one is set (or a level was chosen), else as
 * one line on stderr. A fallback chosen on purpose is noticed by the fallback
 * engine instead, at `warn` (src/spawn/fallback-engine.ts).
 */
function warnFallback(platform: string, cause: string, remedy: string | undefined): void {
  const chosen = hostLoggerSet() || (process.env["EXACTSPAWN_LOG_LEVEL"] ?? "") !== "";
  (chosen ? logger() : libraryChild(stderrLogger("warn"))).error(
    remedy === undefined ? { platform, cause } : { platform, cause, remedy },
    "exactspawn: native addon unavailable, using the child_process fallback",
  );
}

/**
 * What builds the addon where no file fits or loads: the package's install
 * script, which npm 11 runs for a dependency only once approved.
 */
const BUILD_REMEDY =
  "build it with `npm rebuild exactspawn` (needs make, a C++ compiler and python3; " +
  "where npm asks, first `npm install-scripts approve exactspawn`)";

function load(): { binding: NativeBinding | null; status: NativeStatus } {
  const platform = platformTuple();
  if (forcedOff || envForcesOff()) {
    const why = forcedOff ? "disabled by disableNative()" : "disabled by EXACTSPAWN_NATIVE";
    return { binding: null, status: { loaded: false, reason: why, platform } };
  }
  let binding: NativeBinding | null = null;
  let cause: string;
  let failure: unknown;
  let remedy: string | undefined = BUILD_REMEDY;
  try {
    const located = locateAddon(PACKAGE_ROOT);
    if (located.path === undefined) throw new Error(located.reason);
    const before = mappedNow();
    const require = createRequire(import.meta.url);
    const opened = openFirst(located.fitting, (path) => require(path) as NativeBinding);
    if (opened.module === undefined) throw new Error(opened.failures.join("; "));
    binding = opened.module;
    const file = loadedFile(opened.path, before, mappedNow());
    const shortfall = kernelShortfall(binding);
    if (shortfall === undefined) {
      const exitWatch = binding.useHostLoop?.(wantsHostLoop(currentRuntime()));
      binding.setHelperPath?.(join(dirname(opened.path), HELPER_NAME));
      return { binding, status: { loaded: true, reason: undefined, platform, exitWatch, file } };
    }
    cause = shortfall;
    failure = new Error(shortfall);
    remedy = undefined;
  } catch (error) {
    cause = firstLine(error);
    failure = error;
  }
  const reason = `could not load the native addon on ${platform}: ${cause}`;
  if ((process.env["EXACTSPAWN_NATIVE"] ?? "").toLowerCase() === "required") {
    throw new Error(reason, { cause: failure });
  }
  warnFallback(platform, cause, remedy);
  return { binding: null, status: { loaded: false, reason, platform } };
}

/** The addon, or null when it is off or failed to load (see `nativeStatus()`). */
export function nativeBinding(): NativeBinding | null {
  cached ??= load();
  return cached.binding;
}

/** Whether the addon is in use and, if not, why. */
export function nativeStatus(): NativeStatus {
  cached ??= load();
  const binding = cached.binding;
  if (binding?.helperStatus === undefined) return cached.status;
  // Read when asked for: reading it opens the helper (one fd for the process's life).
  return Object.defineProperty({ ...cached.status }, "helper", {
    enumerable: true,
    get: () => binding.helperStatus?.(),
  });
}

/** Turns the addon off for the rest of the process (tests of the fallback path). */
export function disableNative(): void {
  forcedOff = true;
  cached = undefined;
}

/**
 * Why the exec helper cannot run, in one line (its error's message and, where
 * the code alone does not say it, the reason), or undefined when it can.
 */
export function helperUnavailable(binding: NativeBinding | null): string | undefined {
  const status = binding?.helperStatus?.();
  if (status?.run !== "unavailable") return undefined;
  const what = status.error?.message ?? `unavailable: ${status.path}`;
  return status.reason === undefined ? what : `${what} (${status.reason})`;
}

/**
 * A step error of the exec helper ("helper": missing, another architecture's
 * build, left out of the build) with the reason added where its code does not
 * say it; any other value as it is.
 */
export function explainHelperFailure<T>(error: T, binding: NativeBinding | null): T {
  if (!(error instanceof Error) || (error as { step?: unknown }).step !== "helper") return error;
  const reason = binding?.helperStatus?.().reason;
  if (reason !== undefined && !error.message.includes(reason)) {
    error.message = `${error.message} (${reason})`;
  }
  return error;
}
