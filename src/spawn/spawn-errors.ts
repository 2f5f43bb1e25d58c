/**
 * The two error classes of `spawn`.
 *
 * - `SpawnError` (code ERR_EXACTSPAWN_EXEC_TOO_LARGE): the exec would not fit
 *   the kernel's argument limits, detected before anything was started. It
 *   names each offending string (argv index or env NAME) with its size, the
 *   footprint and the limit — never a value.
 * - `SubprocessError` (code ERR_EXACTSPAWN_SUBPROCESS_FAILED): a run that
 *   started and failed (non-zero exit, signal, timeout, abort, maxBuffer).
 *   Its message names the program (argv[0]), the reason, the exit status or
 *   signal and sizes only: never an argument past argv[0] and never the
 *   child's output, which may hold any value the child was given (bash's own
 *   `cd: VALUE: No such file`, a `set -x` trace, a prompt in argv). Those
 *   live on their own non-enumerable properties (argv, command, stdout,
 *   stderr, stdoutTail, stderrTail), so a logger serialising the error's
 *   enumerable fields does not copy them either.
 * Exec failures (ENOENT, EACCES, ENOEXEC…) are Node-style system errors
 * (`code`, `errno`, `syscall`, `path`), not either of these.
 */
import { Buffer } from "node:buffer";
import { displayName } from "../errors.js";
import type { ExecFootprint } from "../limits.js";
import type { ContainedReport } from "./contain.js";
import type { ResourceUsage } from "./engine.js";

const BRAND = Symbol.for("exactspawn.SubprocessError");

/** One string named in a SpawnError: an argv index or an env variable name, with its size. */
export type OffendingString =
  | { readonly kind: "argv"; readonly index: number; readonly bytes: number }
  | { readonly kind: "env"; readonly name: string; readonly bytes: number };

function describe(offender: OffendingString): string {
  return offender.kind === "argv"
    ? `argv[${offender.index}] (${offender.bytes} bytes)`
    : `${displayName(offender.name)} (${offender.bytes} bytes)`;
}

/** The exec does not fit the kernel's limits; nothing was started. */
export class SpawnError extends Error {
  override readonly name = "SpawnError";
  readonly code = "ERR_EXACTSPAWN_EXEC_TOO_LARGE";
  readonly file: string;
  readonly footprint: number;
  readonly limit: number;
  readonly maxArgStrlen: number;
  /** Strings over the per-string limit, or (when none is) the largest contributors. */
  readonly offenders: readonly OffendingString[];
  constructor(file: string, fit: ExecFootprint, offenders: readonly OffendingString[]) {
    const single = fit.oversized.length > 0;
    const head = single
      ? `${fit.oversized.length} string(s) exceed the per-string limit of ${fit.maxArgStrlen} bytes`
      : `footprint ${fit.footprint} bytes exceeds the limit of ${fit.limit} bytes by ${fit.overBy}`;
    super(
      `exec of ${file} does not fit the kernel's argument limits (would fail with E2BIG): ${head}; ` +
        `${single ? "offending" : "largest"}: ${offenders.map(describe).join(", ")}. ` +
        `Footprint ${fit.footprint} of ${fit.limit} bytes (argv ${fit.argvBytes}, env ${fit.envBytes}, ` +
        `pointers ${fit.pointerBytes}, filename ${fit.filenameBytes}` +
        `${fit.scriptBytes > 0 ? `, #! interpreter line ${fit.scriptBytes}` : ""}).`,
    );
    this.file = file;
    this.footprint = fit.footprint;
    this.limit = fit.limit;
    this.maxArgStrlen = fit.maxArgStrlen;
    this.offenders = offenders;
  }
}

/** Why a run counts as failed. */
export type FailureReason =
  | "exit"
  | "signal"
  | "timeout"
  | "abort"
  | "maxBuffer"
  | "oom"
  | "limit"
  | "input";

export interface SubprocessFailure {
  readonly reason: FailureReason;
  readonly argv: readonly string[];
  readonly envNames: readonly string[];
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: string | Buffer | null;
  readonly stderr: string | Buffer | null;
  readonly durationMs: number;
  /** What the child cost; null when it was not reaped by the addon (the fallback). */
  readonly resourceUsage: ResourceUsage | null;
  /** The containment applied, with what the kernel counted against its limits (null: none). */
  readonly contained?: ContainedReport | null | undefined;
  readonly timeoutMs?: number | undefined;
  /** When the ending's signal went (SpawnResult.killedAt); absent or null when none went. */
  readonly killedAt?: number | null | undefined;
  readonly cause?: unknown;
}

const TAIL = 4096;

function tail(output: string | Buffer | null): string {
  if (output === null) return "";
  const text = typeof output === "string" ? output : output.toString("utf8");
  return text.length > TAIL ? text.slice(text.length - TAIL) : text;
}

function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

function byteSize(output: string | Buffer | null): number {
  if (output === null) return 0;
  return typeof output === "string" ? Buffer.byteLength(output, "utf8") : output.length;
}

function reasonText(failure: SubprocessFailure): string {
  switch (failure.reason) {
    case "timeout":
      return `timed out after ${failure.timeoutMs} ms${failure.signal ? ` (${failure.signal})` : ""}`;
    case "abort":
      return "was aborted";
    case "maxBuffer":
      return "exceeded maxBuffer";
    case "input":
      return "was ended: its input stream failed (the stream's error is error.cause)";
    case "signal":
      return `was killed with ${failure.signal}`;
    case "oom":
      return "ran out of memory (the kernel's OOM killer ended a process of its contained tree)";
    case "limit":
      return `${failure.signal !== null ? `was killed with ${failure.signal}` : `failed with exit code ${failure.exitCode}`} after its contained tree met a limit (counts in error.contained.limitEvents)`;
    default:
      return `failed with exit code ${failure.exitCode}`;
  }
}

/**
 * The message: program, reason, status, and sizes only. Arguments past
 * argv[0] and the output are counted, never shown: either may carry a value.
 */
function failureMessage(failure: SubprocessFailure): string {
  const program = displayName(failure.argv[0] ?? "(unknown program)");
  const rest = failure.argv.slice(1);
  const sizes: string[] = [];
  if (rest.length > 0) {
    const bytes = rest.reduce((sum, arg) => sum + Buffer.byteLength(arg, "utf8") + 1, 0);
    sizes.push(`${rest.length} more argument(s), ${bytes} bytes, in error.argv`);
  }
  for (const stream of ["stdout", "stderr"] as const) {
    const bytes = byteSize(failure[stream]);
    if (bytes > 0) sizes.push(`${stream} ${bytes} bytes, tail in error.${stream}Tail`);
  }
  return `Command ${reasonText(failure)}: ${program}${sizes.length > 0 ? ` (${sizes.join("; ")})` : ""}`;
}

/** Defines `value` as a read-only, non-enumerable own property. */
function hidden(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: false, writable: false });
}

/**
 * A started run that failed. One class for every kind of run failure.
 *
 * The message holds no value (see the module comment). The arguments and the
 * child's output are on non-enumerable properties: read them on purpose,
 * never log them wholesale.
 */
export class SubprocessError<Stdout = string | Buffer | null, Stderr = Stdout> extends Error {
  override readonly name = "SubprocessError";
  readonly code = "ERR_EXACTSPAWN_SUBPROCESS_FAILED";
  /** Why the run failed: the same field, and the same value, as a result's `failure`. */
  readonly failure: FailureReason;
  /** @deprecated The former name of `failure`, kept for existing callers. */
  readonly reason: FailureReason;
  /** The program, argv[0] as given (escaped for display). */
  readonly program: string;
  /** The whole command line, shell-quoted (may hold values; non-enumerable). */
  declare readonly command: string;
  /** The whole argv (may hold values; non-enumerable). */
  declare readonly argv: readonly string[];
  /** The child's environment, by name only. */
  readonly envNames: readonly string[];
  readonly exitCode: number | null;
  readonly signal: string | null;
  /**
   * Full captured output (null when not captured; non-enumerable), typed like
   * the result of the same options: `SubprocessErrorOf<typeof options>`.
   */
  declare readonly stdout: Stdout;
  declare readonly stderr: Stderr;
  /** The last 4096 characters of each captured stream, as text (non-enumerable). */
  declare readonly stdoutTail: string;
  declare readonly stderrTail: string;
  readonly durationMs: number;
  /** CPU time and peak RSS of the child (see SpawnResult.resourceUsage); null on the fallback. */
  readonly resourceUsage: ResourceUsage | null;
  /**
   * The containment applied (as SpawnResult.contained), with what the kernel
   * counted against its limits: `contained.limitEvents`. null when the step
   * was not contained.
   */
  readonly contained: ContainedReport | null;
  /** Set on errors of runtime.bash and runtime.spawn: the step's name, if it has one. */
  declare readonly step?: string | undefined;
  /** Set on errors of runtime.bash and runtime.spawn: the call's correlation id. */
  declare readonly correlationId?: string;
  readonly timedOut: boolean;
  readonly isCanceled: boolean;
  /** When the child was sent its killSignal (epoch ms; see SpawnResult.killedAt), else null. */
  readonly killedAt: number | null;
  constructor(failure: SubprocessFailure) {
    super(
      failureMessage(failure),
      failure.cause === undefined ? undefined : { cause: failure.cause },
    );
    this.failure = failure.reason;
    this.reason = failure.reason;
    this.program = displayName(failure.argv[0] ?? "");
    hidden(this, "command", failure.argv.map(quote).join(" "));
    hidden(this, "argv", failure.argv);
    this.envNames = failure.envNames.map(displayName);
    this.exitCode = failure.exitCode;
    this.signal = failure.signal;
    hidden(this, "stdout", failure.stdout);
    hidden(this, "stderr", failure.stderr);
    hidden(this, "stdoutTail", tail(failure.stdout));
    hidden(this, "stderrTail", tail(failure.stderr));
    this.durationMs = failure.durationMs;
    this.resourceUsage = failure.resourceUsage;
    this.contained = failure.contained ?? null;
    this.timedOut = failure.reason === "timeout";
    this.isCanceled = failure.reason === "abort";
    this.killedAt = failure.killedAt ?? null;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /**
   * Realm-safe brand check (works across vm contexts and duplicate copies of
   * the package). Name the output type to narrow it:
   * `SubprocessError.is<Buffer>(error)` after a spawn with `encoding: "buffer"`.
   */
  static is<Stdout = string | Buffer | null, Stderr = Stdout>(
    value: unknown,
  ): value is SubprocessError<Stdout, Stderr> {
    return typeof value === "object" && value !== null && Object.hasOwn(value, BRAND);
  }
}
