/**
 * Bounded environment: the last step before spawning. If the exec (file +
 * argv + envp + pointers, the exact model) is still over the limit after the
 * spill, the pressure is resolved by who created it:
 *   1. trusted pressure: while the trusted variables alone (everything but the
 *      untrusted entries, with `trustedArgv`: the argv without anything
 *      untrusted input added to it) are over the limit, non-protected
 *      inherited variables are dropped, largest first (ties: the name that
 *      sorts first);
 *   2. untrusted pressure: then, while the whole is over the limit, untrusted
 *      entries (exported context and step values, empty ones included) are
 *      skipped, largest first, reason "aggregate_env_budget" — untrusted bytes
 *      (each entry's name, value and pointer, and what it added to argv)
 *      never evict a trusted variable and never refuse the step.
 * Protected names and trusted variables that did not come from the inherited
 * environment are never dropped; when they alone do not fit, EnvBudgetError
 * names them and their sizes.
 *
 * Used for bash steps (after planSpill) and on its own for agent children.
 */

import { Buffer } from "node:buffer";
import { compareNames, EnvBudgetError, InvalidEnvError, type SizedName } from "../errors.js";
import { ownProperties } from "../known-options.js";
import { POINTER_BYTES } from "../limits.js";
import { type Logger, logger } from "../log.js";
import { pairBytes } from "./env-input.js";
import { defaultProtectedNames, isProtectedName, type ProtectedNames } from "./names.js";
import type { ArgvSize } from "./spill-plan.js";

export interface BoundedEnvInput {
  /** The environment as it would be passed to the child. Not modified. */
  readonly env: ReadonlyMap<string, string>;
  /** Names whose value came from the inherited (parent) environment: the only trusted drop candidates. */
  readonly inheritedNames: ReadonlySet<string>;
  /** Names whose value came from an untrusted layer that may be skipped (exported context): skipped before any trusted variable is dropped. */
  readonly untrustedNames?: ReadonlySet<string>;
  /** Never dropped. Default `defaultProtectedNames()`. */
  readonly protected?: ProtectedNames;
  /** execve's filename. */
  readonly file: string;
  /** The full argv (argv[0] included), or its measured size (e.g. SpillPlan.argv). */
  readonly argv: readonly string[] | ArgvSize;
  /**
   * The argv as it would be without any untrusted input (a bash step's argv
   * with no spill preamble). What `argv` has beyond it is charged to the
   * untrusted side: the trusted variables are judged with this one. Default `argv`.
   */
  readonly trustedArgv?: readonly string[] | ArgvSize;
  readonly limits: { readonly execLimit: number; readonly maxArgStrlen: number };
  /**
   * `NAME=value\0` bytes by name, already measured (e.g. SpillPlan.sizes); it
   * must cover every name of `env`. Default: measured here.
   */
  readonly sizes?: ReadonlyMap<string, number>;
  /** Default: the library logger. */
  readonly log?: Logger;
}

export interface BoundedEnv {
  /** The environment to pass: the input less `dropped`, in the input's order (the input map itself when nothing was dropped). */
  readonly env: ReadonlyMap<string, string>;
  /** Dropped inherited variables, in drop order (largest first). */
  readonly dropped: readonly SizedName[];
  /** Untrusted entries skipped for the budget ("aggregate_env_budget"), in skip order (largest first). */
  readonly skipped: readonly SizedName[];
  /** Exact-model bytes of the result. */
  readonly footprint: number;
  readonly limit: number;
  /**
   * False only when what `argv` has beyond `trustedArgv` does not fit even
   * with every untrusted entry skipped: then nothing was skipped or logged,
   * and the caller retries with a smaller argv (a bash step: the script
   * through a descriptor, then no spill at all). True otherwise.
   */
  readonly fits: boolean;
}

/** pairBytes of every variable, by name. */
export function measureEnv(env: ReadonlyMap<string, string>): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const [name, value] of env) sizes.set(name, pairBytes(name, value));
  return sizes;
}

/** Σ(UTF-8 bytes + 1), count and longest string of an argv (argv[0] included); a measured size passes through. */
export function measureArgv(argv: ReadonlyArray<string | Buffer> | ArgvSize): ArgvSize {
  if (!Array.isArray(argv)) return argv as ArgvSize;
  let bytes = 0;
  let longest = 0;
  // A Buffer counts its own bytes (byteLength ignores the encoding for it).
  for (const arg of argv as ReadonlyArray<string | Buffer>) {
    const size = Buffer.byteLength(arg, "utf8") + 1;
    bytes += size;
    longest = Math.max(longest, size);
  }
  return { bytes, argc: argv.length, longest };
}

/**
 * Trims the environment to fit (see the module comment). Pure apart from one
 * WARN per dropped variable (name and size only). When the input already
 * fits, `env` is the input map itself. Throws EnvBudgetError
 * (remaining names and sizes, budget, total; never values) when nothing left
 * to drop makes it fit, and InvalidEnvError when a single argv string is over
 * maxArgStrlen (no environment change can fix that).
 */
export function boundedEnv(given: BoundedEnvInput): BoundedEnv {
  // Own properties only (known-options.ts): nothing inherited is an input.
  const input = ownProperties(given);
  const { env, limits } = input;
  const protectedNames = input.protected ?? defaultProtectedNames();
  const log = input.log ?? logger();
  const argv = measureArgv(input.argv);
  if (argv.longest !== undefined && argv.longest > limits.maxArgStrlen) {
    throw new InvalidEnvError(
      `boundedEnv: an argv string of ${argv.longest} bytes is over the per-string limit ` +
        `(${limits.maxArgStrlen} bytes)`,
    );
  }
  const fileBytes = Buffer.byteLength(input.file, "utf8") + 1;
  const fixed = fileBytes + argv.bytes + POINTER_BYTES * Math.max(argv.argc, 1);
  const trustedArgv = input.trustedArgv === undefined ? argv : measureArgv(input.trustedArgv);
  const trustedFixed =
    fileBytes + trustedArgv.bytes + POINTER_BYTES * Math.max(trustedArgv.argc, 1);

  const sizes = input.sizes ?? measureEnv(env);
  // A name the caller's sizes miss is measured, never counted as zero.
  const sizeOf = (name: string, value: string): number => sizes.get(name) ?? pairBytes(name, value);
  let envBytes = 0;
  let oversized = 0;
  for (const [name, value] of env) {
    const bytes = sizeOf(name, value);
    envBytes += bytes + POINTER_BYTES;
    if (bytes > limits.maxArgStrlen) oversized += 1;
  }
  const fits = (): boolean => fixed + envBytes <= limits.execLimit && oversized === 0;

  if (fits()) {
    return {
      env,
      dropped: [],
      skipped: [],
      footprint: fixed + envBytes,
      limit: limits.execLimit,
      fits: true,
    };
  }

  const removed = new Set<string>();
  const remove = (candidate: SizedName): void => {
    removed.add(candidate.name);
    envBytes -= candidate.bytes + POINTER_BYTES;
    if (candidate.bytes > limits.maxArgStrlen) oversized -= 1;
  };
  const untrusted = input.untrustedNames ?? new Set<string>();
  // The trusted variables alone: only their own overflow may cost a trusted variable.
  let untrustedBytes = 0;
  let untrustedOversized = 0;
  const skippable: SizedName[] = [];
  for (const [name, value] of env) {
    if (!untrusted.has(name)) continue;
    const bytes = sizeOf(name, value);
    untrustedBytes += bytes + POINTER_BYTES;
    if (bytes > limits.maxArgStrlen) untrustedOversized += 1;
    skippable.push({ name, bytes });
  }
  const trustedFits = (): boolean =>
    trustedFixed + envBytes - untrustedBytes <= limits.execLimit &&
    oversized === untrustedOversized;

  // Phase 1 (trusted pressure): drop non-protected inherited variables until the trusted ones fit.
  const candidates: SizedName[] = [];
  const stuck: SizedName[] = [];
  for (const [name, value] of env) {
    if (untrusted.has(name)) continue;
    const bytes = sizeOf(name, value);
    if (input.inheritedNames.has(name) && !isProtectedName(name, protectedNames)) {
      candidates.push({ name, bytes });
    } else if (bytes > limits.maxArgStrlen) {
      stuck.push({ name, bytes });
    }
  }
  // A variable that may not be dropped and is over the per-string limit can
  // never fit: say so at once, and drop nothing on the way.
  if (stuck.length > 0) {
    throw new EnvBudgetError(
      stuck,
      limits.maxArgStrlen,
      Math.max(...stuck.map((s) => s.bytes)),
      "per-string",
    );
  }
  candidates.sort((a, b) => b.bytes - a.bytes || compareNames(a.name, b.name));
  const dropped: SizedName[] = [];
  for (const candidate of candidates) {
    if (trustedFits()) break;
    remove(candidate);
    dropped.push(candidate);
  }
  // Logged once the outcome is known: a result with fits false is retried by the caller.
  const logDrops = (): void => {
    for (const { name, bytes } of dropped) {
      log.warn({ variable: name, bytes }, "inherited variable dropped to fit the exec limit");
    }
  };
  if (!trustedFits()) {
    logDrops();
    const offenders: SizedName[] = [];
    for (const [name, value] of env) {
      if (!removed.has(name) && !untrusted.has(name)) {
        offenders.push({ name, bytes: sizeOf(name, value) });
      }
    }
    throw new EnvBudgetError(offenders, limits.execLimit - trustedFixed, envBytes - untrustedBytes);
  }
  // What argv carries for the untrusted side (a spill preamble) must fit
  // beside the trusted variables once every untrusted entry is skipped.
  if (fixed + envBytes - untrustedBytes > limits.execLimit || oversized !== untrustedOversized) {
    return {
      env: input.env,
      dropped,
      skipped: [],
      footprint: fixed + envBytes,
      limit: limits.execLimit,
      fits: false,
    };
  }
  logDrops();

  // Phase 2 (untrusted pressure): skip untrusted entries, largest first, until everything fits.
  skippable.sort((a, b) => b.bytes - a.bytes || compareNames(a.name, b.name));
  const skipped: SizedName[] = [];
  for (const candidate of skippable) {
    if (fits()) break;
    remove(candidate);
    untrustedBytes -= candidate.bytes + POINTER_BYTES;
    if (candidate.bytes > limits.maxArgStrlen) untrustedOversized -= 1;
    skipped.push(candidate);
    log.warn(
      { variable: candidate.name, bytes: candidate.bytes, reason: "aggregate_env_budget" },
      "untrusted variable skipped to fit the exec limit",
    );
  }
  const out = new Map<string, string>();
  for (const [name, value] of env) if (!removed.has(name)) out.set(name, value);
  return {
    env: out,
    dropped,
    skipped,
    footprint: fixed + envBytes,
    limit: limits.execLimit,
    fits: true,
  };
}
