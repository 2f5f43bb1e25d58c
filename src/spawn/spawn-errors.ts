/**
 * The two error classes of `spawn`.
 *
 * - `SpawnError` (code ERR_EXACTSPAWN_EXEC_TOO_LARGE): the exec would not fit
 *   the kernel's argument limits, detected before anything was started. It
 *   names each offending string (argv index or env NAME) with its size, the
 *   footprint and the limit — never a value.
 * - `SubprocessError` (code ERR_EXACTSPAWN_SUBPROCESS_FAILED): a run that
 *   started and failed (non-zero exit, signal, timeout, abort, maxBuffer).
 *   It carries the command (argv, env NAMES only), exitCode, signal, output
 *   tails, durationMs and `cause`.
 * Exec failures (ENOENT, EACCES, ENOEXEC…) are Node-style system errors
 * (`code`, `errno`, `syscall`, `path`), not either of these.
 */
import type { Buffer } from "node:buffer";
import { displayName } from "../errors.js";
import type { ExecFootprint } from "../limits.js";

const BRAND = Symbol.for("exactspawn.SubprocessError");

/** One string named in a SpawnError: an argv index or an env variable name, with its size. */
export type OffendingString =
  | { readonly kind: "argv"; readonly index: number; readonly bytes: number }
  | { readonly kind: "env"; readonly name: string; readonly bytes: number };

function describe(offender: OffendingString): string {
  return offender.kind === "argv"
    ? `argv[${offender.index}] (${offender.bytes} bytes)`
    : `${offender.name} (${offender.bytes} bytes)`;
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
export type FailureReason = "exit" | "signal" | "timeout" | "abort" | "maxBuffer";

export interface SubprocessFailure {
  readonly reason: FailureReason;
  readonly argv: readonly string[];
  readonly envNames: readonly string[];
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: string | Buffer | null;
  readonly stderr: string | Buffer | null;
  readonly durationMs: number;
  readonly timeoutMs?: number | undefined;
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

/** A started run that failed. One class for every kind of run failure. */
export class SubprocessError extends Error {
  override readonly name = "SubprocessError";
  readonly code = "ERR_EXACTSPAWN_SUBPROCESS_FAILED";
  readonly reason: FailureReason;
  /** The command line, shell-quoted for display. */
  readonly command: string;
  readonly argv: readonly string[];
  /** The child's environment, by name only. */
  readonly envNames: readonly string[];
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** Full captured output (null when not captured). */
  readonly stdout: string | Buffer | null;
  readonly stderr: string | Buffer | null;
  /** The last 4096 characters of each captured stream, as text. */
  readonly stdoutTail: string;
  readonly stderrTail: string;
  readonly durationMs: number;
  readonly timedOut: boolean;
  readonly isCanceled: boolean;
  constructor(failure: SubprocessFailure) {
    const command = failure.argv.map(quote).join(" ");
    const what =
      failure.reason === "timeout"
        ? `timed out after ${failure.timeoutMs} ms${failure.signal ? ` (${failure.signal})` : ""}`
        : failure.reason === "abort"
          ? "was aborted"
          : failure.reason === "maxBuffer"
            ? "exceeded maxBuffer"
            : failure.reason === "signal"
              ? `was killed with ${failure.signal}`
              : `failed with exit code ${failure.exitCode}`;
    const stderrTail = tail(failure.stderr);
    super(
      `Command ${what}: ${command}${stderrTail ? `\n${stderrTail}` : ""}`,
      failure.cause === undefined ? undefined : { cause: failure.cause },
    );
    this.reason = failure.reason;
    this.command = command;
    this.argv = failure.argv;
    this.envNames = failure.envNames.map(displayName);
    this.exitCode = failure.exitCode;
    this.signal = failure.signal;
    this.stdout = failure.stdout;
    this.stderr = failure.stderr;
    this.stdoutTail = tail(failure.stdout);
    this.stderrTail = stderrTail;
    this.durationMs = failure.durationMs;
    this.timedOut = failure.reason === "timeout";
    this.isCanceled = failure.reason === "abort";
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** Realm-safe brand check (works across vm contexts and duplicate copies of the package). */
  static is(value: unknown): value is SubprocessError {
    return typeof value === "object" && value !== null && BRAND in value;
  }
}
