/**
 * Error classes and the one helper that builds Node-style system errors.
 *
 * Guarantee shared by everything here: messages and properties carry variable
 * names, indexes and byte sizes only — never a value of an environment
 * variable or argument.
 */
import { constants } from "node:os";
import { getSystemErrorName } from "node:util";

/** Bad input to a public function: an env name, value or list that cannot be represented. */
export class InvalidEnvError extends TypeError {
  override readonly name = "InvalidEnvError";
  readonly code = "ERR_EXACTSPAWN_INVALID_ENV";
  /** The offending variable's name (possibly escaped), or undefined when the name itself is the problem. */
  readonly variable: string | undefined;
  constructor(message: string, variable?: string) {
    super(message);
    this.variable = variable;
  }
}

/** One variable that did not fit, by name and size. */
export interface SizedName {
  readonly name: string;
  readonly bytes: number;
}

/** How many offenders an EnvBudgetError message lists before summarising the rest. */
const LISTED_OFFENDERS = 20;

/**
 * The environment does not fit the exec limit even after every variable that
 * may be dropped is gone. `offenders` lists the remaining variables (name and
 * `NAME=value\0` size, largest first); `budget` is what the environment may
 * take once argv, the filename and argv's pointers are counted; `totalBytes`
 * is what the remaining environment takes (strings and pointers). Never values.
 */
export class EnvBudgetError extends Error {
  override readonly name = "EnvBudgetError";
  readonly code = "ERR_EXACTSPAWN_ENV_BUDGET";
  readonly budget: number;
  readonly offenders: readonly SizedName[];
  readonly totalBytes: number;
  /**
   * "total": the variables together exceed the budget. "per-string": each
   * listed variable alone is over the per-string limit (then `budget` is that
   * limit and `totalBytes` the largest offender).
   */
  readonly kind: "total" | "per-string";
  constructor(
    offenders: readonly SizedName[],
    budget: number,
    totalBytes: number,
    kind: "total" | "per-string" = "total",
  ) {
    const sorted = [...offenders].sort((a, b) => b.bytes - a.bytes || compareNames(a.name, b.name));
    const listed = sorted.slice(0, LISTED_OFFENDERS);
    const lines = listed.map((o) => `  - ${displayName(o.name)} (${o.bytes} bytes)`);
    if (sorted.length > listed.length) {
      lines.push(`  ... and ${sorted.length - listed.length} smaller variable(s)`);
    }
    const head =
      kind === "per-string"
        ? `environment budget exceeded before spawn: these variables are each over the ` +
          `per-string limit of ${budget} bytes (NAME=value and its NUL), and none of them may ` +
          `be dropped (protected, or not inherited):`
        : `environment budget exceeded before spawn: the environment needs ${totalBytes} bytes ` +
          `but only ${budget} bytes are left for it, and none of these variables may be dropped ` +
          `(protected, or not inherited):`;
    super(
      `${head}\n${lines.join("\n")}\n` +
        "Step values are spilled to private files automatically; move large inherited or " +
        "protected variables out of the environment (pass them by file or stdin), or raise " +
        "the stack limit (ulimit -s).",
    );
    this.budget = budget;
    this.offenders = sorted;
    this.totalBytes = totalBytes;
    this.kind = kind;
  }
}

/**
 * A step value could not be spilled to a file: it contains NUL (which the
 * preamble's `read -d ''` cannot carry), or writing its file failed. Carries
 * the variable's name, the value's UTF-8 byte length and, for I/O failures,
 * the system error code and `cause`; never the value.
 */
export class SpillError extends Error {
  override readonly name = "SpillError";
  readonly code: "ERR_EXACTSPAWN_SPILL_NUL" | "ERR_EXACTSPAWN_SPILL_WRITE";
  readonly variable: string;
  readonly bytes: number;
  /** The I/O error's code (ENOENT, ENOSPC, …) for write failures. */
  readonly ioCode: string | undefined;
  constructor(
    code: SpillError["code"],
    variable: string,
    bytes: number,
    detail: string,
    options?: { cause?: unknown; ioCode?: string | undefined },
  ) {
    super(`failed to spill ${displayName(variable)} (${bytes} bytes): ${detail}`, {
      cause: options?.cause,
    });
    this.code = code;
    this.variable = variable;
    this.bytes = bytes;
    this.ioCode = options?.ioCode;
  }
}

/**
 * Untrusted input (context and step values) holds far more keys than the
 * runtime's `maxUntrustedKeys` allows: refused before any per-key work. Keys
 * beyond the bound but within `limit` are skipped and reported instead.
 * Carries counts only, never a key or a value.
 */
export class TooManyKeysError extends RangeError {
  override readonly name = "TooManyKeysError";
  readonly code = "ERR_EXACTSPAWN_TOO_MANY_KEYS";
  /** The keys (or flattened variables) seen: the count that crossed `limit`. */
  readonly count: number;
  /** The runtime's maxUntrustedKeys. */
  readonly maxUntrustedKeys: number;
  /** The refusal threshold: 4 × maxUntrustedKeys. */
  readonly limit: number;
  constructor(where: string, count: number, maxUntrustedKeys: number, limit: number) {
    super(
      `${where}: untrusted input has ${count} keys or variables (context and step values), ` +
        `more than ${limit} (4 × maxUntrustedKeys, ${maxUntrustedKeys}): refused before ` +
        "planning. Up to that many, the keys beyond maxUntrustedKeys are skipped " +
        '("too_many_keys"); pass large data through a file or stdin instead.',
    );
    this.count = count;
    this.maxUntrustedKeys = maxUntrustedKeys;
    this.limit = limit;
  }
}

/** One untrusted entry that did not reach a child, by name and reason. */
export interface SkippedName {
  readonly name: string;
  readonly reason: string;
}

/**
 * A runtime created with `untrustedSkips: "throw"` refused to start a child
 * because some untrusted input (a context key or step value) would not reach
 * it. `skipped` lists every one (name and reason); the message names them
 * (escaped). Never a value.
 */
export class UntrustedSkipError extends Error {
  override readonly name = "UntrustedSkipError";
  readonly code = "ERR_EXACTSPAWN_UNTRUSTED_SKIP";
  readonly skipped: readonly SkippedName[];
  constructor(where: string, skipped: readonly SkippedName[]) {
    const listed = skipped
      .slice(0, LISTED_OFFENDERS)
      .map((s) => `${displayName(s.name)} (${s.reason})`);
    const more =
      skipped.length > listed.length ? ` and ${skipped.length - listed.length} more` : "";
    super(
      `${where}: ${skipped.length} untrusted value(s) would not reach the child: ` +
        `${listed.join(", ")}${more} (untrustedSkips: "throw"; every name is in error.skipped)`,
    );
    this.skipped = skipped;
  }
}

/** Brands an error a runtime.bash or runtime.spawn call rejected with (see isStepError). */
export const STEP_ERROR_BRAND: unique symbol = Symbol.for("exactspawn.StepError");

/**
 * Any error a `runtime.bash` or `runtime.spawn` call throws or rejects with:
 * a `SubprocessError`, a system error (`ENOENT`…), an `EnvBudgetError`, a
 * `TypeError` for a bad option… each carries the step's identity as own
 * fields. Narrow further with `SubprocessError.is(error)` for a run failure.
 */
export type StepError = Error & {
  /** The call's `step` option (undefined: the step has no name). */
  readonly step: string | undefined;
  /** The call's correlation id: given, the runtime's, or a UUID made for the call. */
  readonly correlationId: string;
  /** The error's code where it has one ("ERR_EXACTSPAWN_SUBPROCESS_FAILED", "ENOENT"…). */
  readonly code?: string | undefined;
};

/**
 * Type guard for a caught value: true for every error a runtime.bash or
 * runtime.spawn call threw or rejected with, so `catch (error)` (typed
 * `unknown`) can read `error.step` and `error.correlationId`. A realm-safe
 * brand check (a registered symbol): it also holds for an error from
 * another copy of the package or another vm context, where `instanceof`
 * would not. Total and pure; false for anything else.
 */
export function isStepError(value: unknown): value is StepError {
  return typeof value === "object" && value !== null && Object.hasOwn(value, STEP_ERROR_BRAND);
}

/** Properties Node puts on its own system errors (fs, child_process). */
export interface SystemErrorFields {
  code: string;
  errno: number;
  syscall: string;
  path?: string | undefined;
  /**
   * The library step that failed: an option ("cwd", "rlimits",
   * "parentDeathSignal"…) or a phase ("spawn", "exec", "helper", "stdio", "watch",
   * "wait", "cleanup"). Set by the native engine on every failure.
   */
  step?: string | undefined;
}

export type SystemError = Error & SystemErrorFields;

/**
 * Builds an Error shaped like Node's own system errors: `code` ("ENOENT"),
 * negative `errno`, `syscall`, optional `path` and `step`; message
 * "syscall CODE path". `errno` may be given positive or negative.
 */
export function systemError(
  errno: number,
  syscall: string,
  path?: string,
  step?: string,
): SystemError {
  const negative = -Math.abs(errno);
  // libuv's table lacks some errnos (ENOEXEC among them); os.constants has them all.
  let code = getSystemErrorName(negative);
  if (code.startsWith("Unknown system error")) {
    const known = Object.entries(constants.errno).find(([, value]) => value === -negative);
    if (known !== undefined) code = known[0];
  }
  const err = new Error(`${syscall} ${code}${path === undefined ? "" : ` ${path}`}`) as SystemError;
  err.code = code;
  err.errno = negative;
  err.syscall = syscall;
  if (path !== undefined) err.path = path;
  if (step !== undefined) err.step = step;
  return err;
}

/** Byte-wise (code unit) name order used for every deterministic tie-break. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Renders a name for a message: printable ASCII as is, anything else escaped,
 * long names shortened. Names are never secret, but they may be hostile.
 */
/** The first line of an error's message (of String(error) for a non-Error): for one-line reports. */
export function firstLine(error: unknown): string {
  return error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error);
}

export function displayName(name: string): string {
  const escaped = escapeControls(JSON.stringify(name).slice(1, -1));
  return escaped.length > 80 ? `${escaped.slice(0, 77)}...` : escaped;
}

/**
 * Characters that must never reach a terminal raw from input, chosen by
 * Unicode property rather than by a list of ranges (a list misses the next
 * one): every control (Cc: C0, DEL, C1, where U+009B is a CSI on many
 * terminals), every format character (Cf: bidi embeddings, overrides,
 * isolates and marks, zero-width characters, the soft hyphen, U+180E, the
 * interlinear annotation characters U+FFF9–FFFB, tags U+E0000–E007F), the
 * line and paragraph separators (Zl, Zp), lone surrogates (Cs), and every
 * default-ignorable code point (the Hangul fillers U+115F, U+1160, U+3164,
 * U+FFA0, variation selectors, the combining grapheme joiner U+034F, and
 * those Unicode reserves for more).
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}]/gu;

/** Each UTF-16 unit as `\uXXXX` (a pair for a code point past U+FFFF): what JSON reads back. */
function unicodeEscape(char: string): string {
  let escaped = "";
  for (let i = 0; i < char.length; i++) {
    escaped += `\\u${char.charCodeAt(i).toString(16).padStart(4, "0")}`;
  }
  return escaped;
}

/**
 * `text` with every invisible character (see INVISIBLE) written as
 * `\uXXXX`: the one function every piece of command output that may hold
 * input goes through (names in messages, tables, errors and, through
 * escapeJsonControls, JSON and log lines). Pure; printable text is unchanged.
 */
export function escapeControls(text: string): string {
  return text.replace(INVISIBLE, unicodeEscape);
}

/**
 * escapeControls for JSON text already made by JSON.stringify: C0 controls
 * are left alone (inside strings JSON already escaped them; outside they are
 * the layout's own newlines), everything else is escaped as `\uXXXX`, which
 * JSON reads back as the same character. Pure.
 */
export function escapeJsonControls(json: string): string {
  return json.replace(INVISIBLE, (char) => (char < " " ? char : unicodeEscape(char)));
}
