/**
 * Step values → environment variables: `RECIPE_VAR_<key>` (the prefix is
 * configurable), nested `RECIPE_VAR_<key>__<child>` names for object values,
 * and the ASCII upper-case alias `<KEY>`.
 *
 * Flattening rule (decided here; the recipe runner only names the nested form):
 *   - A string value is used as is; `null` becomes ""; any other value
 *     (number, boolean, array, object) becomes its JSON text.
 *   - A plain object (not an array) additionally yields one variable per own
 *     enumerable key, `<parent>__<key>`, recursively, up to `maxDepth` levels
 *     of nesting; deeper objects are only present as JSON text in their parent.
 *     Arrays are never flattened by index.
 *   - Aliases are made for top-level keys only.
 *   - Keys are visited in code-unit order, so the output is deterministic.
 *   - Collisions: the first variable to claim a name keeps it (prefixed
 *     names, including nested ones, are claimed before any alias). Between
 *     aliases the last key in sorted order wins, as the context export does.
 *     Every loser is reported as skipped with reason "name_collision".
 *
 * Step values are data: a tree. An object or array reached twice — a cycle,
 * or a reference shared between two places — is a TypeError before any work
 * (flattening a shared graph costs time exponential in its depth), as is a
 * Map key that is not a string (its toString is never called). Any other odd
 * input (BigInt, throwing toJSON, lone surrogates, names with "=") is skipped
 * with a reason, never thrown. Values
 * containing NUL are passed through: whether they must spill (and so fail) is
 * the spill planner's decision. Skips are returned as data and not logged
 * here; the caller decides whether to log them (names only).
 */

import { types } from "node:util";
import { compareNames, displayName, TooManyKeysError } from "../errors.js";
import { ownProperties } from "../known-options.js";
import { asciiUpper, isUpperIdentifier } from "./names.js";
import { REFUSE_FACTOR, topLevelKeyCount } from "./untrusted-keys.js";

/** Why a step value produced no variable under a name. */
export type StepValueSkipReason =
  | "invalid_identifier"
  | "invalid_name"
  | "unrepresentable_value"
  | "value_not_well_formed"
  | "name_collision"
  | (string & {});

export interface StepValueSkip {
  readonly name: string;
  readonly reason: StepValueSkipReason;
}

export interface StepValueOptions {
  /** Prefix of the primary names. Default "RECIPE_VAR_". */
  readonly prefix?: string;
  /** Separator between a parent's name and a nested key. Default "__". */
  readonly nestedSeparator?: string;
  /** Levels of object nesting that get their own variables. Default 4; 0 disables nesting. */
  readonly maxDepth?: number;
  /**
   * Which top-level keys also get their upper-case alias: true (every key,
   * the recipe-runner-compat preset), false (none), or the set of declared
   * bare names (ASCII upper-case) an alias may take. Default true; the
   * runtime passes its declared names.
   */
  readonly aliases?: boolean | ReadonlySet<string>;
  /**
   * Called for each alias that already passed the identifier rule; returns a
   * skip reason, or null to keep the alias. Default: keep every alias. The
   * context denylist plugs in here.
   */
  readonly aliasFilter?: (name: string) => string | null;
  /**
   * The runtime's maxUntrustedKeys: values that would flatten into more than
   * REFUSE_FACTOR times as many variables are refused (TooManyKeysError)
   * before any value is encoded. Default: no bound.
   */
  readonly maxUntrustedKeys?: number;
}

export interface StepValueEnv {
  /** Variable name → value, in a deterministic order (prefixed names, then aliases). */
  readonly env: Map<string, string>;
  readonly skipped: readonly StepValueSkip[];
}

/** Step values as a record (own enumerable keys) or a Map. */
export type StepValues = Readonly<Record<string, unknown>> | ReadonlyMap<string, unknown>;

const DEFAULT_PREFIX = "RECIPE_VAR_";
const DEFAULT_SEPARATOR = "__";
const DEFAULT_MAX_DEPTH = 4;

/** A value's environment text, or undefined when it has none (cycles, BigInt, throwing toJSON…). */
function encode(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (value === null) return "";
  try {
    const text = JSON.stringify(value);
    return typeof text === "string" ? text : undefined;
  } catch {
    return undefined;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function ownEntries(values: StepValues | Record<string, unknown>): [string, unknown][] {
  // The default sort compares UTF-16 code units, the order compareNames defines.
  if (types.isMap(values)) {
    const out: [string, unknown][] = [];
    let index = 0;
    // Map.prototype.forEach, not the instance's (possibly overridden) iterator.
    Map.prototype.forEach.call(values, (value: unknown, key: unknown) => {
      if (typeof key !== "string") {
        // Only the key's type is named: String(key) would run its toString.
        throw new TypeError(
          `step values: Map key ${index} is a ${key === null ? "null" : typeof key}, not a string`,
        );
      }
      out.push([key, value]);
      index += 1;
    });
    return out.sort((a, b) => compareNames(a[0], b[0]));
  }
  // Descriptors, not property reads: an accessor is never called.
  return Object.keys(values)
    .sort()
    .map((key) => [key, Object.getOwnPropertyDescriptor(values, key)?.value]);
}

/** The own enumerable values of an object or array, read through descriptors (no getter runs). */
function childValues(node: object): unknown[] {
  const out: unknown[] = [];
  for (const key of Object.keys(node)) {
    const descriptor = Object.getOwnPropertyDescriptor(node, key);
    if (descriptor !== undefined && "value" in descriptor) out.push(descriptor.value);
  }
  return out;
}

/**
 * Throws TypeError when any object or array is reachable twice from the step
 * values (a cycle or a shared reference). One pass, each object visited once:
 * linear in the size of the values, whatever their shape. With `bound`,
 * throws TooManyKeysError as soon as the variables the values flatten into
 * (top-level keys and the keys of plain objects within maxDepth) are more
 * than `bound.limit`: before the rest of the graph is walked.
 */
function assertTree(
  top: readonly [string, unknown][],
  maxDepth: number,
  bound: { readonly limit: number; readonly max: number } | undefined,
): void {
  const seen = new Set<object>();
  let variables = top.length;
  for (const [key, root] of top) {
    if (root === null || typeof root !== "object") continue; // a string or number: no graph
    const stack: [unknown, number][] = [[root, 0]];
    while (stack.length > 0) {
      const [node, depth] = stack.pop()!;
      if (node === null || typeof node !== "object") continue;
      if (bound !== undefined && depth < maxDepth && isPlainObject(node)) {
        variables += topLevelKeyCount(node);
        if (variables > bound.limit) {
          throw new TooManyKeysError("step values", variables, bound.max, bound.limit);
        }
      }
      if (seen.has(node)) {
        throw new TypeError(
          `step values: the value of ${displayName(key)} reaches an object twice ` +
            "(a cycle or a shared reference); step values must be a tree of data",
        );
      }
      seen.add(node);
      if (types.isMap(node) || types.isSet(node)) continue;
      for (const child of childValues(node)) stack.push([child, depth + 1]);
    }
  }
}

/**
 * A piece of a name: no "=", no NUL, well-formed UTF-16. A non-empty name made
 * of such pieces is one execve can carry (well-formed strings joined stay
 * well-formed), so each piece is checked once, never the joined name again.
 */
function isNamePiece(piece: string): boolean {
  return !piece.includes("=") && !piece.includes("\0") && piece.isWellFormed();
}

/**
 * Turns step values into environment variables (see the module comment for
 * the exact rule). Pure and linear in the size of the values. Throws
 * TypeError for a cycle or shared reference and for a non-string Map key;
 * everything else it cannot represent is listed in `skipped` with a reason.
 * Never logs, never runs a getter or a key's toString.
 */
export function stepValueEnv(values: StepValues, given: StepValueOptions = {}): StepValueEnv {
  // Own properties only (known-options.ts): no inherited prefix, separator or filter.
  const options = ownProperties(given);
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const separator = options.nestedSeparator ?? DEFAULT_SEPARATOR;
  const maxDepth = Math.max(0, Math.floor(options.maxDepth ?? DEFAULT_MAX_DEPTH));
  const aliasFilter = options.aliasFilter ?? (() => null);
  const aliases = options.aliases ?? true;
  const env = new Map<string, string>();
  const skipped: StepValueSkip[] = [];
  const max = options.maxUntrustedKeys;
  const bound = max === undefined ? undefined : { limit: REFUSE_FACTOR * max, max };
  if (bound !== undefined && topLevelKeyCount(values) > bound.limit) {
    throw new TooManyKeysError("step values", topLevelKeyCount(values), bound.max, bound.limit);
  }
  const top = ownEntries(values);
  assertTree(top, maxDepth, bound);

  const prefixOk = isNamePiece(prefix);
  const separatorOk = isNamePiece(separator);
  // Top-level names are distinct (distinct keys, one prefix): a collision
  // needs a nested name, so the lookup starts with the first one.
  let nested = false;
  const claim = (name: string, piecesOk: boolean, value: unknown): boolean => {
    if (!piecesOk || name.length === 0) {
      skipped.push({ name, reason: "invalid_name" });
      return false;
    }
    const text = encode(value);
    if (text === undefined) {
      skipped.push({ name, reason: "unrepresentable_value" });
      return false;
    }
    if (!text.isWellFormed()) {
      skipped.push({ name, reason: "value_not_well_formed" });
      return false;
    }
    if (nested && env.has(name)) {
      skipped.push({ name, reason: "name_collision" });
      return false;
    }
    env.set(name, text);
    return true;
  };

  const visit = (name: string, piecesOk: boolean, value: unknown, depth: number): void => {
    if (!claim(name, piecesOk, value)) return;
    if (depth >= maxDepth || !isPlainObject(value)) return;
    nested = true;
    for (const [key, child] of ownEntries(value)) {
      visit(`${name}${separator}${key}`, separatorOk && isNamePiece(key), child, depth + 1);
    }
  };

  for (const [key, value] of top) visit(`${prefix}${key}`, prefixOk && isNamePiece(key), value, 0);

  // No declared bare names: no alias at all (each would be passed over, not skipped).
  if (aliases !== false && (aliases === true || aliases.size > 0)) {
    const aliasNames = new Set<string>();
    for (const [key, value] of top) {
      const alias = asciiUpper(key);
      // Only declared bare names get an alias; the others are not aliased at all (not a skip).
      if (aliases !== true && !aliases.has(alias)) continue;
      if (!isUpperIdentifier(alias)) {
        skipped.push({ name: alias, reason: "invalid_identifier" });
        continue;
      }
      const reason = aliasFilter(alias);
      if (reason !== null) {
        skipped.push({ name: alias, reason });
        continue;
      }
      // Taken already: by a prefixed name (which keeps it) or by an earlier alias.
      const taken = env.has(alias);
      if (taken && !aliasNames.has(alias)) {
        skipped.push({ name: alias, reason: "name_collision" });
        continue;
      }
      const text = encode(value);
      if (text === undefined || !text.isWellFormed()) {
        skipped.push({
          name: alias,
          reason: text === undefined ? "unrepresentable_value" : "value_not_well_formed",
        });
        continue;
      }
      // Sorted order, last writer wins between aliases.
      if (taken) skipped.push({ name: alias, reason: "name_collision" });
      else aliasNames.add(alias);
      env.set(alias, text);
    }
  }
  return { env, skipped };
}
