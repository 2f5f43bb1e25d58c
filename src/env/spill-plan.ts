/**
 * The spill planner: which step values leave the environment for private
 * files before a bash step starts.
 *
 * Phase 1 (per-value cap): every step value whose `NAME=value\0` exceeds the
 *   cap spills, each name judged on its own size (RECIPE_VAR_x can spill while
 *   its alias X stays inline). Phase-1 spills are listed in name order.
 * Phase 2 (total): while the whole exec (file + argv, which grows with the
 *   preamble, + envp + pointers) is over the exec limit by the exact model,
 *   the remaining step values spill largest first (ties: the name that sorts
 *   first, code-unit order) until it fits or none is left.
 *
 * Only step values are candidates; empty values never spill. A value that
 * must spill but whose name is not spillable is dropped (one WARN, name and
 * size) and the step still starts. A value that must spill and contains NUL
 * is a SpillError (the preamble's `read -d ''` stops at NUL); the error and
 * every log line carry names and sizes, never values.
 */

import { Buffer } from "node:buffer";
import { compareNames, SpillError } from "../errors.js";
import { ownProperties } from "../known-options.js";
import { PER_VALUE_ENV_CAP, POINTER_BYTES } from "../limits.js";
import { type Logger, logger } from "../log.js";
import { measureEnv } from "./bounded-env.js";
import { pairBytes } from "./env-input.js";
import { freezeMap, isFrozenMap } from "./frozen-map.js";
import { isSpillableName } from "./names.js";

/** The size of an argv as the exact exec model counts it. */
export interface ArgvSize {
  /** Σ(strlen + 1) over every argv string, argv[0] included. */
  readonly bytes: number;
  readonly argc: number;
  /** The largest single argv string, NUL included (checked against maxArgStrlen) when known. */
  readonly longest?: number;
}

/** argv's size once `spilled` (in this order) are spilled and their preamble lines added. */
export type ArgvBytesFn = (spilled: readonly string[]) => ArgvSize;

export interface SpillPlanInput {
  /** The final merged environment, every layer applied. Not modified. */
  readonly env: ReadonlyMap<string, string>;
  /** Names whose final value came from step values: the only spill candidates. */
  readonly stepNames: Iterable<string>;
  /** The interpreter's absolute path (execve's filename). */
  readonly file: string;
  /**
   * argv's size given the names spilled so far, in spill order (see
   * `bashArgvSizer`). Must be pure. The array it receives is the planner's own
   * and may grow after the call returns: copy it to keep it.
   */
  readonly argvBytes: ArgvBytesFn;
  readonly limits: { readonly execLimit: number; readonly maxArgStrlen: number };
  /** Default PER_VALUE_ENV_CAP (MAX_ARG_STRLEN − 4096). */
  readonly perValueCap?: number;
  /** Default: the library logger. */
  readonly log?: Logger;
}

/** A variable by name and `NAME=value\0` size. */
export interface SpilledVariable {
  readonly name: string;
  readonly bytes: number;
}

export interface DroppedStepValue {
  readonly name: string;
  readonly bytes: number;
  readonly reason: "over_cap_unspillable_name";
}

export interface SpillPlan {
  /**
   * The environment without spilled and dropped variables (the input's own
   * order): the input map itself when nothing left it.
   */
  readonly inline: ReadonlyMap<string, string>;
  /** `NAME=value\0` bytes of every variable of the input, by name (built on first read, then kept). */
  readonly sizes: ReadonlyMap<string, number>;
  /** Phase-1 spills in name order, then phase-2 spills in the order they were chosen. */
  readonly spilled: readonly SpilledVariable[];
  readonly dropped: readonly DroppedStepValue[];
  /** Exact-model bytes of file + argv + inline env + pointers. */
  readonly footprint: number;
  /** footprint ≤ execLimit and no inline or argv string over maxArgStrlen. */
  readonly fits: boolean;
  /** argvBytes(spilled names) as finally computed. */
  readonly argv: ArgvSize;
}

/** `names` in code-unit order: the list itself when it already is (layerEnv's stepValueNames). */
function sortedNames(names: Iterable<string>): readonly string[] {
  if (!Array.isArray(names)) return [...names].sort();
  const list = names as readonly string[];
  for (let i = 1; i < list.length; i++) {
    if (list[i - 1]! > list[i]!) return [...list].sort();
  }
  return list;
}

interface Measured {
  /** Σ `NAME=value\0` bytes. */
  readonly bytes: number;
  /**
   * The variables whose `NAME=value\0` is over `threshold`, by name: the
   * only ones the cap or the per-string limit can concern (usually none).
   */
  readonly large: ReadonlyMap<string, number>;
  readonly threshold: number;
}

/** What measure() last found for each map that cannot change (a runtime's fixed env). */
const measuredOf = new WeakMap<object, Measured>();

/** One pass over the env: the total and the large variables (see Measured); once per frozen map. */
function measure(env: ReadonlyMap<string, string>, threshold: number): Measured {
  const known = measuredOf.get(env);
  if (known !== undefined && known.threshold === threshold) return known;
  const large = new Map<string, number>();
  let bytes = 0;
  for (const [name, value] of env) {
    const size = pairBytes(name, value);
    bytes += size;
    if (size > threshold) large.set(name, size);
  }
  if (!isFrozenMap(env)) return { bytes, large, threshold };
  const measured = Object.freeze({ bytes, large: freezeMap(large), threshold });
  measuredOf.set(env, measured);
  return measured;
}

/** Every variable's size, by name: built only when someone reads SpillPlan.sizes. */
const sizesOf = new WeakMap<object, ReadonlyMap<string, number>>();
function sizesByName(env: ReadonlyMap<string, string>): ReadonlyMap<string, number> {
  const known = sizesOf.get(env);
  if (known !== undefined) return known;
  const sizes = measureEnv(env);
  if (!isFrozenMap(env)) return sizes;
  const frozen = freezeMap(sizes);
  sizesOf.set(env, frozen);
  return frozen;
}

/**
 * Plans which step values spill (see the module comment for the rules).
 * Pure and deterministic apart from WARN/DEBUG log lines (names and sizes
 * only). When nothing spills or is dropped, `inline` is the input map itself. Throws SpillError (code
 * ERR_EXACTSPAWN_SPILL_NUL) when a value that must spill contains NUL.
 */
export function planSpill(given: SpillPlanInput): SpillPlan {
  // Own properties only (known-options.ts): nothing inherited is an input.
  const input = ownProperties(given);
  const cap = input.perValueCap ?? PER_VALUE_ENV_CAP;
  const log = input.log ?? logger();
  const { env, stepNames, limits } = input;
  const fileBytes = Buffer.byteLength(input.file, "utf8") + 1;

  // Only a variable over the cap or the per-string limit needs its own size
  // here; the rest count in the total.
  const measured = measure(env, Math.min(cap, limits.maxArgStrlen));
  const { large } = measured;
  let envBytes = measured.bytes;
  let envCount = env.size;

  const removed = new Set<string>();
  const spilledNames: string[] = [];
  const spilled: SpilledVariable[] = [];
  const dropped: DroppedStepValue[] = [];

  const spill = (name: string, bytes: number, phase: 1 | 2): void => {
    const value = env.get(name) ?? "";
    if (value.includes("\0")) {
      throw new SpillError(
        "ERR_EXACTSPAWN_SPILL_NUL",
        name,
        Buffer.byteLength(value, "utf8"),
        "the value contains a NUL byte, which the spill preamble cannot read back",
      );
    }
    removed.add(name);
    spilledNames.push(name);
    spilled.push({ name, bytes });
    envBytes -= bytes;
    envCount -= 1;
    log.debug({ variable: name, bytes, phase }, "step value spilled to a private file");
  };

  // The default sort compares UTF-16 code units, the order compareNames defines.
  // Phase 1 looks only at the large variables that are step values, in name order.
  const overCap: string[] = [];
  for (const [name, bytes] of large) if (bytes > cap) overCap.push(name);
  const stepNameSet = overCap.length === 0 ? undefined : new Set(stepNames);
  for (const name of overCap.sort()) {
    if (!stepNameSet?.has(name)) continue;
    const bytes = large.get(name)!;
    if (isSpillableName(name)) {
      spill(name, bytes, 1);
    } else {
      removed.add(name);
      dropped.push({ name, bytes, reason: "over_cap_unspillable_name" });
      envBytes -= bytes;
      envCount -= 1;
      log.warn(
        { variable: name, bytes, cap },
        "step value dropped: over the per-value cap and its name cannot be spilled",
      );
    }
  }

  const footprintNow = (argv: { bytes: number; argc: number }): number =>
    fileBytes + argv.bytes + envBytes + POINTER_BYTES * (Math.max(argv.argc, 1) + envCount);

  let argv = input.argvBytes(spilledNames);
  let footprint = footprintNow(argv);
  if (footprint > limits.execLimit) {
    // Phase 2 (rarely needed): every other non-empty step value is a candidate.
    const spillable: SpilledVariable[] = [];
    let previous: string | undefined;
    for (const name of sortedNames(stepNames)) {
      if (name === previous) continue; // a name listed twice is one candidate
      previous = name;
      const value = env.get(name);
      if (value === undefined || value === "" || removed.has(name)) continue;
      if (isSpillableName(name)) spillable.push({ name, bytes: pairBytes(name, value) });
    }
    spillable.sort((a, b) => b.bytes - a.bytes || compareNames(a.name, b.name));
    for (const candidate of spillable) {
      if (footprint <= limits.execLimit) break;
      spill(candidate.name, candidate.bytes, 2);
      argv = input.argvBytes(spilledNames);
      footprint = footprintNow(argv);
    }
  }

  let inline: ReadonlyMap<string, string>;
  let sizes: ReadonlyMap<string, number> | undefined;
  let oversized = argv.longest !== undefined && argv.longest > limits.maxArgStrlen;
  for (const [name, bytes] of large) {
    if (bytes > limits.maxArgStrlen && !removed.has(name)) oversized = true;
  }
  if (removed.size === 0) {
    inline = env;
  } else {
    const kept = new Map<string, string>();
    inline = kept;
    for (const [name, value] of env) if (!removed.has(name)) kept.set(name, value);
  }
  return {
    inline,
    get sizes(): ReadonlyMap<string, number> {
      sizes ??= sizesByName(env);
      return sizes;
    },
    spilled,
    dropped,
    footprint,
    fits: footprint <= limits.execLimit && !oversized,
    argv,
  };
}
