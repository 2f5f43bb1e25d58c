/**
 * The bound on how many keys untrusted input may bring to one child
 * (RuntimeOptions.maxUntrustedKeys). 120,000 tiny context keys fit the exec
 * budget, yet bash then takes minutes to start, and a million keys kept the
 * host's event loop busy for seconds while planning. So:
 *   - up to `max` untrusted variables (context and step values together,
 *     step values first) are exported; the rest are skipped, reason
 *     "too_many_keys", in name order;
 *   - input with more than REFUSE_FACTOR × `max` top-level keys (or
 *     flattened variables) is refused with TooManyKeysError before any
 *     per-key work: a Map's size is read in O(1); a record's own keys are
 *     counted once (Object.keys, the cheapest enumeration JavaScript has).
 *
 * Pure; no logging. The skips are reported as data (a step's `skipped`).
 */
import { types } from "node:util";
import { TooManyKeysError } from "../errors.js";
import type { ContextExport, ContextSkip } from "./context-export.js";
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
 * Keeps at most `max` untrusted variables: the step values first (in their
 * map's order), then the context's pairs (in name order) while room is left.
 * Every other entry is skipped with reason "too_many_keys". The inputs are
 * returned as they are when within the bound. Pure.
 */
export function capUntrusted(
  stepValues: ReadonlyMap<string, string> | undefined,
  context: ContextExport | undefined,
  max: number,
): CappedUntrusted {
  const steps = stepValues?.size ?? 0;
  const pairs = context?.pairs.length ?? 0;
  if (steps + pairs <= max) return { stepValues, context, skipped: [] };
  const skipped: LayerSkip[] = [];
  let keptSteps = stepValues;
  if (stepValues !== undefined && steps > max) {
    const kept = new Map<string, string>();
    for (const [name, value] of stepValues) {
      if (kept.size < max) kept.set(name, value);
      else skipped.push(Object.freeze({ layer: "step", key: name, name, reason: "too_many_keys" }));
    }
    keptSteps = kept;
  }
  const room = Math.max(0, max - Math.min(steps, max));
  let keptContext = context;
  if (context !== undefined && pairs > room) {
    for (const [name] of context.pairs.slice(room)) {
      const skip: ContextSkip = { key: name, name, reason: "too_many_keys" };
      skipped.push(Object.freeze({ ...skip, layer: "context" as const }));
    }
    keptContext = Object.freeze({
      pairs: context.pairs.slice(0, room),
      skipped: context.skipped,
    });
  }
  return { stepValues: keptSteps, context: keptContext, skipped };
}
