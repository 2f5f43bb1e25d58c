/**
 * The bound on how many keys untrusted input may bring to one child
 * (RuntimeOptions.maxUntrustedKeys). 120,000 tiny context keys fit the exec
 * budget, yet bash then takes minutes to start, and a million keys kept the
 * host's event loop busy for seconds while planning. So:
 *   - up to `max` untrusted variables (context and step values together)
 *     are exported: first those whose name the host declared (a bare name
 *     it listed), then the undeclared ones, step values before context
 *     entries, each in its order; the rest are skipped, reason
 *     "too_many_keys", so undeclared keys never displace a declared one;
 *   - input with more than REFUSE_FACTOR × `max` top-level keys (or
 *     flattened variables) is refused with TooManyKeysError before any
 *     per-key work: a Map's size is read in O(1); a record's own keys are
 *     counted once (Object.keys, the cheapest enumeration JavaScript has).
 *
 * Pure; no logging. The skips are reported as data (a step's `skipped`).
 */
import { types } from "node:util";
import { TooManyKeysError } from "../errors.js";
import type { ContextExport } from "./context-export.js";
import type { LayerSkip } from "./layers.js";

/** The default of RuntimeOptions.maxUntrustedKeys. */
export const DEFAULT_MAX_UNTRUSTED_KEYS = 4096;

/** Input with more than this many times maxUntrustedKeys keys is refused outright. */
export const REFUSE_FACTOR = 4;

/**
 * Throws TypeError unless `value` is undefined, a Map or a plain record (not
 * null, an array or a primitive): `context: 42` is refused like `values: 42`,
 * never read as no context at all.
 */
export function assertRecordOrMap(value: unknown, label: string): void {
  if (value === undefined || types.isMap(value)) return;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new TypeError(`${label} must be a record or a Map`);
  }
}

/** The own top-level keys of a record or Map (0 for anything else); never runs a getter. */
export function topLevelKeyCount(input: unknown): number {
  if (input === null || typeof input !== "object") return 0;
  if (types.isMap(input)) return (input as ReadonlyMap<unknown, unknown>).size;
  try {
    return Object.keys(input).length;
  } catch {
    return 0; // a hostile Proxy: the exporter reads what it can and skips the rest
  }
}

/** Throws TypeError unless `value` is a positive safe integer (or undefined: the default). */
export function maxUntrustedKeysOption(value: unknown, where: string): number {
  if (value === undefined) return DEFAULT_MAX_UNTRUSTED_KEYS;
  if (!Number.isSafeInteger(value) || (value as number) < 1) {
    throw new TypeError(`${where}: options.maxUntrustedKeys must be a positive integer`);
  }
  return value as number;
}

/**
 * Throws TooManyKeysError when the context and step values together have
 * more than REFUSE_FACTOR × `max` top-level keys. O(1) for Maps.
 */
export function assertUntrustedKeyCount(
  inputs: readonly unknown[],
  max: number,
  where: string,
): void {
  const limit = REFUSE_FACTOR * max;
  let count = 0;
  for (const input of inputs) {
    count += topLevelKeyCount(input);
    if (count > limit) throw new TooManyKeysError(where, count, max, limit);
  }
}

/** What `capUntrusted` kept and left out. */
export interface CappedUntrusted {
  readonly stepValues: ReadonlyMap<string, string> | undefined;
  readonly context: ContextExport | undefined;
  /** Left out for the bound, reason "too_many_keys": step values, then context entries. */
  readonly skipped: readonly LayerSkip[];
}

/**
 * Keeps at most `max` untrusted variables. Declared names come first (a name
 * in `declared`: a bare name the host listed), so no number of undeclared
 * keys can displace one; then the rest, step values (in their map's order)
 * before the context's pairs (in name order), while room is left. Every
 * other entry is skipped with reason "too_many_keys". `declared` "any" (the
 * compatibility preset, where every name is bare) gives no precedence. The
 * inputs are returned as they are when within the bound. Pure.
 */
export function capUntrusted(
  stepValues: ReadonlyMap<string, string> | undefined,
  context: ContextExport | undefined,
  max: number,
  declared: ReadonlySet<string> | "any" = "any",
): CappedUntrusted {
  const steps = stepValues?.size ?? 0;
  const pairs = context?.pairs.length ?? 0;
  if (steps + pairs <= max) return { stepValues, context, skipped: [] };
  // One flag per entry, set in two passes over the same order (declared
  // names, then the others): linear, with no per-key set or closure.
  let room = max;
  const stepNames = stepValues === undefined ? [] : [...stepValues.keys()];
  const keepStep = new Uint8Array(steps);
  const contextPairs = context?.pairs ?? [];
  const keepPair = new Uint8Array(pairs);
  const declaredFirst = declared !== "any";
  for (let pass = declaredFirst ? 0 : 1; pass < 2 && room > 0; pass++) {
    const wantDeclared = pass === 0;
    for (let i = 0; i < steps && room > 0; i++) {
      if (declaredFirst && declared.has(stepNames[i]!) !== wantDeclared) continue;
      keepStep[i] = 1;
      room -= 1;
    }
    for (let i = 0; i < pairs && room > 0; i++) {
      if (declaredFirst && declared.has(contextPairs[i]![0]) !== wantDeclared) continue;
      keepPair[i] = 1;
      room -= 1;
    }
  }
  const skipped: LayerSkip[] = [];
  let keptSteps = stepValues;
  if (stepValues !== undefined && keepStep.indexOf(0) !== -1) {
    const kept = new Map<string, string>();
    let i = 0;
    for (const [name, value] of stepValues) {
      if (keepStep[i++] === 1) kept.set(name, value);
      else skipped.push(Object.freeze({ layer: "step", key: name, name, reason: "too_many_keys" }));
    }
    keptSteps = kept;
  }
  let keptContext = context;
  if (context !== undefined && keepPair.indexOf(0) !== -1) {
    const kept: (typeof contextPairs)[number][] = [];
    for (let i = 0; i < pairs; i++) {
      const pair = contextPairs[i]!;
      if (keepPair[i] === 1) kept.push(pair);
      else
        skipped.push(
          Object.freeze({ layer: "context", key: pair[0], name: pair[0], reason: "too_many_keys" }),
        );
    }
    keptContext = Object.freeze({ pairs: Object.freeze(kept), skipped: context.skipped });
  }
  return { stepValues: keptSteps, context: keptContext, skipped };
}
