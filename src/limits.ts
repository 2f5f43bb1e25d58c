/**
 * Kernel exec limits, probing, the exact exec-size model and the env budget.
 *
 * The model (Linux fs/exec.c, verified to the byte on this machine kind):
 *   limit L = max(min(RLIMIT_STACK / 4, 6 MiB), 128 KiB)   (unlimited stack → 6 MiB)
 *   execve fits iff Σ(argv strlen+1) + Σ(envp strlen+1) + strlen(file)+1
 *                   + 8 × (max(argc, 1) + envc) ≤ L
 *   (an empty argv counts as [""]: the kernel supplies that argv[0])
 *   and every argv/envp string, NUL included, is ≤ MAX_ARG_STRLEN (32 pages).
 * Sizes are UTF-8 bytes of what the child receives.
 */
import { Buffer } from "node:buffer";
import {
  byteLength,
  type EnvEntry,
  type EnvInput,
  envEntries,
  hasLoneSurrogate,
  knownEnvTotals,
} from "./env/env-input.js";
import { displayName, InvalidEnvError } from "./errors.js";
import { type NativeBinding, nativeBinding, nativeStatus, type RawProbedValue } from "./native.js";
import {
  type HeadReader,
  readHead,
  SHEBANG_NOT_READ,
  type ShebangLine,
  shebangCost,
  shebangMayMatter,
} from "./shebang.js";

export { envPairBytes } from "./env/env-input.js";

/** Largest single argv/envp string, NUL included: 32 pages of 4 KiB. */
export const MAX_ARG_STRLEN = 131_072;
/** The spill threshold for step values: MAX_ARG_STRLEN less a 4 KiB safety margin. */
export const PER_VALUE_ENV_CAP = MAX_ARG_STRLEN - 4096;
/** The budget used when the limits cannot be probed (the addon is unavailable). */
export const ENV_BUDGET_FLOOR = 262_144;
/** Room kept for argv (and the filename) when the env budget is computed without them. */
export const ARGV_RESERVE = 131_072;

const KIB = 1024;
const MIB = 1024 * KIB;
/** The kernel's cap on the argument area: 3/4 of the default 8 MiB stack (_STK_LIM). */
const EXEC_LIMIT_CAP = 6 * MIB;
/** The kernel's minimum argument area, ARG_MAX = 32 pages. */
const EXEC_LIMIT_MIN = 128 * KIB;
/** Bytes of one argv or envp pointer in the exec model (64-bit). */
export const POINTER_BYTES = 8;

/** A probed size: a number of bytes, "unlimited", or null when the read failed. */
export type ProbedSize = number | "unlimited" | null;

export interface Limits {
  /** "native": read from the kernel through the addon; "fallback": the conservative floor. */
  readonly source: "native" | "fallback";
  /** sysconf(_SC_ARG_MAX). */
  readonly argMax: ProbedSize;
  /** getrlimit(RLIMIT_STACK) soft and hard limits. */
  readonly stackSoft: ProbedSize;
  readonly stackHard: ProbedSize;
  readonly pageSize: ProbedSize;
  /** L of the exact model: the bytes argv + envp + filename + pointers may take. */
  readonly execLimit: number;
  /** The per-string limit, NUL included. */
  readonly maxArgStrlen: number;
  /** Bytes an environment may take when argv is not yet known (see envByteBudget). */
  readonly envBudget: number;
  /** Field name → errno name, for each read that failed. */
  readonly errors: Readonly<Record<string, string>>;
  /** Why the fallback is in use; undefined for "native". */
  readonly fallbackReason: string | undefined;
}

/** L from a stack soft limit, exactly as the kernel computes it. */
export function execLimitForStack(stack: number | "unlimited"): number {
  if (stack === "unlimited") return EXEC_LIMIT_CAP;
  return Math.max(Math.min(Math.floor(stack / 4), EXEC_LIMIT_CAP), EXEC_LIMIT_MIN);
}

/**
 * The limits an exec is measured against when the child sets its own
 * RLIMIT_STACK soft limit before execve (`rlimits.stack`, in bytes; Infinity
 * for unlimited): the kernel sizes the argument area from the limit in force
 * at the exec, the child's, while `limits` came from the host's. The smaller
 * of the two is used, so a footprint that fits fits under either. Pure and
 * total; returns `limits` itself when no stack limit is requested or the
 * requested one is no smaller.
 */
export function limitsWithChildStack<T extends Pick<Limits, "execLimit" | "maxArgStrlen">>(
  limits: T,
  stackSoft: number | undefined,
): T | Pick<Limits, "execLimit" | "maxArgStrlen"> {
  if (stackSoft === undefined) return limits;
  const child = execLimitForStack(stackSoft === Number.POSITIVE_INFINITY ? "unlimited" : stackSoft);
  if (child >= limits.execLimit) return limits;
  return { execLimit: child, maxArgStrlen: limits.maxArgStrlen };
}

/** The env budget for an exec limit: L less the argv reserve, the reserve capped at L/2. */
export function envBudgetForLimit(execLimit: number): number {
  return execLimit - Math.min(ARGV_RESERVE, Math.floor(execLimit / 2));
}

function size(field: RawProbedValue): ProbedSize {
  if (field.error !== null) return null;
  if (field.unlimited) return "unlimited";
  return field.value;
}

/**
 * Pure: turns a raw probe (or its absence) into Limits. Total; a failed field
 * degrades to sysconf(_SC_ARG_MAX) (which glibc derives the same way), and
 * with neither to the floor.
 */
export function limitsFromProbe(binding: NativeBinding | null, fallbackReason?: string): Limits {
  if (binding === null) {
    return {
      source: "fallback",
      argMax: null,
      stackSoft: null,
      stackHard: null,
      pageSize: null,
      execLimit: ENV_BUDGET_FLOOR,
      maxArgStrlen: MAX_ARG_STRLEN,
      envBudget: ENV_BUDGET_FLOOR,
      errors: {},
      fallbackReason: fallbackReason ?? "the native addon is not loaded",
    };
  }
  const raw = binding.probe();
  const errors: Record<string, string> = {};
  for (const key of ["argMax", "stackSoft", "stackHard", "pageSize"] as const) {
    const error = raw[key].error;
    if (error !== null) errors[key] = error;
  }
  const argMax = size(raw.argMax);
  const stackSoft = size(raw.stackSoft);
  const pageSize = size(raw.pageSize);
  let execLimit: number;
  let source: Limits["source"] = "native";
  let reason: string | undefined;
  if (stackSoft !== null) execLimit = execLimitForStack(stackSoft);
  else if (typeof argMax === "number" && argMax > 0) execLimit = argMax;
  else {
    execLimit = ENV_BUDGET_FLOOR;
    source = "fallback";
    reason = "neither RLIMIT_STACK nor _SC_ARG_MAX could be read";
  }
  const maxArgStrlen =
    typeof pageSize === "number" && pageSize > 0 ? pageSize * 32 : MAX_ARG_STRLEN;
  return {
    source,
    argMax,
    stackSoft,
    stackHard: size(raw.stackHard),
    pageSize,
    execLimit,
    maxArgStrlen,
    envBudget: source === "native" ? envBudgetForLimit(execLimit) : ENV_BUDGET_FLOOR,
    errors,
    fallbackReason: reason,
  };
}

let cachedLimits: Limits | undefined;

/**
 * The host's limits, probed once and cached (pass `{ refresh: true }` after
 * changing RLIMIT_STACK). Never throws: without the addon the result has
 * `source: "fallback"` and the 256 KiB floor.
 */
export function probeLimits(options: { refresh?: boolean } = {}): Limits {
  if (cachedLimits === undefined || options.refresh) {
    const binding = nativeBinding();
    cachedLimits = limitsFromProbe(binding, nativeStatus().reason);
  }
  return cachedLimits;
}

/**
 * Throws TypeError unless `value` is undefined or limits a caller may plan
 * against: `execLimit` and `maxArgStrlen` positive integers.
 */
export function assertLimitsOption(value: unknown, where: string): void {
  if (value === undefined) return;
  const limits = value as Partial<Record<"execLimit" | "maxArgStrlen", unknown>> | null;
  if (
    limits === null ||
    typeof limits !== "object" ||
    !Number.isSafeInteger(limits.execLimit) ||
    !Number.isSafeInteger(limits.maxArgStrlen) ||
    (limits.execLimit as number) <= 0 ||
    (limits.maxArgStrlen as number) <= 0
  ) {
    throw new TypeError(
      `${where}: options.limits must have positive integer execLimit and maxArgStrlen`,
    );
  }
}

/** Bytes an environment may take when argv is not yet known. See `probeLimits()`. */
export function envByteBudget(): number {
  return probeLimits().envBudget;
}

/** A single argv/envp string over the per-string limit. */
export type OversizedString =
  | { readonly kind: "argv"; readonly index: number; readonly bytes: number }
  | { readonly kind: "env"; readonly name: string; readonly bytes: number };

export interface ExecFootprint {
  /** Whether the exec fits both the total and the per-string limit. */
  readonly fits: boolean;
  /** Total bytes by the exact model. */
  readonly footprint: number;
  readonly limit: number;
  readonly maxArgStrlen: number;
  readonly argvBytes: number;
  readonly envBytes: number;
  readonly filenameBytes: number;
  readonly pointerBytes: number;
  /** Bytes the kernel's `#!` loader adds at its peak (0 for a binary, or when not read). */
  readonly scriptBytes: number;
  /**
   * The `#!` interpreters the kernel would load, outermost first, each with its
   * optional single argument. Empty for a binary, and when the file was not read
   * because even the longest possible `#!` lines would fit (see `scriptChecked`).
   */
  readonly interpreters: readonly { readonly path: string; readonly arg: string | null }[];
  /** Whether the file's first line was read (only when a script could cross the limit). */
  readonly scriptChecked: boolean;
  /** footprint − limit when positive, else 0. */
  readonly overBy: number;
  /** Every string over maxArgStrlen, in argv then env order. */
  readonly oversized: readonly OversizedString[];
}

function argBytes(arg: unknown, index: number): number {
  if (typeof arg === "string") {
    if (arg.includes("\0")) throw new InvalidEnvError(`execFits: argv[${index}] contains NUL`);
    if (hasLoneSurrogate(arg)) {
      throw new InvalidEnvError(`execFits: argv[${index}] contains a lone UTF-16 surrogate`);
    }
    return Buffer.byteLength(arg, "utf8") + 1;
  }
  if (arg instanceof Uint8Array) {
    if (arg.includes(0)) throw new InvalidEnvError(`execFits: argv[${index}] contains NUL`);
    return byteLength(Buffer.from(arg.buffer, arg.byteOffset, arg.byteLength)) + 1;
  }
  throw new InvalidEnvError(
    `execFits: argv[${index}] must be a string or Buffer, got ${arg === null ? "null" : typeof arg}`,
  );
}

/**
 * Applies the exact kernel model to `file`, the full argv (argv[0] included)
 * and the child's whole environment. Pure given `limits` (default: probed),
 * except that a file whose `#!` line could decide the verdict has its first
 * 256 bytes read (a relative interpreter path resolves against the current
 * directory). Throws InvalidEnvError for input execve could not take; never
 * echoes values.
 */
export function execFits(
  file: string,
  argv: ReadonlyArray<string | Buffer>,
  env: EnvInput,
  limits: Pick<Limits, "execLimit" | "maxArgStrlen"> = probeLimits(),
): ExecFootprint {
  if (typeof file !== "string" || file.length === 0) {
    throw new InvalidEnvError("execFits: file must be a non-empty string");
  }
  if (file.includes("\0") || hasLoneSurrogate(file)) {
    throw new InvalidEnvError("execFits: file contains NUL or a lone UTF-16 surrogate");
  }
  if (!Array.isArray(argv)) throw new InvalidEnvError("execFits: argv must be an array");
  return footprintOf(file, argv, envEntries(env, "execFits"), limits);
}

type Interpreter = ExecFootprint["interpreters"][number];
const NO_INTERPRETERS: readonly Interpreter[] = Object.freeze([]);

function interpreterOf(line: ShebangLine): Interpreter {
  return {
    path: line.interpreter.toString("utf8"),
    arg: line.arg === null ? null : line.arg.toString("utf8"),
  };
}

/**
 * execFits for an environment already validated by envEntries (spawn has
 * one): the same model without validating or measuring the entries again.
 * `cwd` is the child's directory (for relative paths in `#!` lines); `read`
 * reads a file's head (tests pass their own).
 */
export function footprintOf(
  file: string,
  argv: ReadonlyArray<string | Buffer>,
  entries: readonly EnvEntry[],
  limits: Pick<Limits, "execLimit" | "maxArgStrlen"> = probeLimits(),
  cwd: string = process.cwd(),
  read: HeadReader = readHead,
): ExecFootprint {
  const oversized: OversizedString[] = [];
  let argvBytes = 0;
  let argv0Bytes = 0;
  argv.forEach((arg, index) => {
    const bytes = argBytes(arg, index);
    if (index === 0) argv0Bytes = bytes;
    argvBytes += bytes;
    if (bytes > limits.maxArgStrlen) oversized.push({ kind: "argv", index, bytes });
  });
  let envBytes = 0;
  // A frozen environment's totals were summed once (envEntriesOnce).
  const known = knownEnvTotals(entries);
  if (known !== undefined && known.largest <= limits.maxArgStrlen) {
    envBytes = known.bytes;
  } else {
    for (const entry of entries) {
      envBytes += entry.bytes;
      if (entry.bytes > limits.maxArgStrlen) {
        oversized.push({ kind: "env", name: displayName(entry.name), bytes: entry.bytes });
      }
    }
  }
  // With no argv the kernel supplies "" as argv[0] (Linux 5.18+): one byte, and
  // the pointer counted by max(argc, 1). A #! rewrite frees it like any argv[0].
  if (argv.length === 0) argvBytes = argv0Bytes = 1;
  const filenameBytes = Buffer.byteLength(file, "utf8") + 1;
  const pointerBytes = POINTER_BYTES * (Math.max(argv.length, 1) + entries.length);
  const plain = argvBytes + envBytes + filenameBytes + pointerBytes;
  // The binary case costs nothing more: the file is read only when the plain
  // image fits and the longest possible #! chain would not.
  const script = shebangMayMatter(plain, filenameBytes, argv0Bytes, limits.execLimit)
    ? shebangCost(file, cwd, { plain, filenameBytes, argv0Bytes }, limits.execLimit, read)
    : SHEBANG_NOT_READ;
  const scriptBytes = script.bytes;
  const footprint = plain + scriptBytes;
  return {
    fits: footprint <= limits.execLimit && oversized.length === 0,
    footprint,
    limit: limits.execLimit,
    maxArgStrlen: limits.maxArgStrlen,
    argvBytes,
    envBytes,
    filenameBytes,
    pointerBytes,
    scriptBytes,
    interpreters: script.chain.length === 0 ? NO_INTERPRETERS : script.chain.map(interpreterOf),
    scriptChecked: script.checked,
    overBy: Math.max(0, footprint - limits.execLimit),
    oversized,
  };
}
