/**
 * Error classes and the one helper that builds Node-style system errors.
 *
 * Guarantee shared by everything here: messages and properties carry variable
 * names, indexes and byte sizes only — never a value of an environment
 * variable or argument.
 */
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

/**
 * Protected variables alone do not fit the environment budget. Lists names and
 * sizes (largest first) and the budget, with advice; never values.
 */
export class EnvBudgetError extends Error {
  override readonly name = "EnvBudgetError";
  readonly code = "ERR_EXACTSPAWN_ENV_BUDGET";
  readonly budget: number;
  readonly offenders: readonly SizedName[];
  readonly totalBytes: number;
  constructor(offenders: readonly SizedName[], budget: number, totalBytes: number) {
    const sorted = [...offenders].sort((a, b) => b.bytes - a.bytes || compareNames(a.name, b.name));
    const lines = sorted.map((o) => `  - ${o.name} (${o.bytes} bytes)`).join("\n");
    super(
      `environment budget exceeded before spawn: ${totalBytes} bytes of protected variables ` +
        `do not fit the measured budget (${budget} bytes):\n${lines}\n` +
        "These variables are protected and were not dropped. Step values are spilled to " +
        "private files automatically; move large inherited or protected variables out of " +
        "the environment (pass them by file or stdin), or raise the stack limit (ulimit -s).",
    );
    this.budget = budget;
    this.offenders = sorted;
    this.totalBytes = totalBytes;
  }
}

/** Properties Node puts on its own system errors (fs, child_process). */
export interface SystemErrorFields {
  code: string;
  errno: number;
  syscall: string;
  path?: string | undefined;
}

export type SystemError = Error & SystemErrorFields;

/**
 * Builds an Error shaped like Node's own system errors: `code` ("ENOENT"),
 * negative `errno`, `syscall`, optional `path`; message "syscall CODE path".
 * `errno` may be given positive or negative.
 */
export function systemError(errno: number, syscall: string, path?: string): SystemError {
  const negative = -Math.abs(errno);
  let code: string;
  try {
    code = getSystemErrorName(negative);
  } catch {
    code = `Unknown system error ${negative}`;
  }
  const err = new Error(`${syscall} ${code}${path === undefined ? "" : ` ${path}`}`) as SystemError;
  err.code = code;
  err.errno = negative;
  err.syscall = syscall;
  if (path !== undefined) err.path = path;
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
export function displayName(name: string): string {
  const escaped = JSON.stringify(name).slice(1, -1);
  return escaped.length > 80 ? `${escaped.slice(0, 77)}...` : escaped;
}
