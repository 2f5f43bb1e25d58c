/**
 * The inherited base of a child environment: a snapshot of the parent
 * environment narrowed by an optional allow list (essentials always kept), an
 * optional block list, and the per-string filter (no `NAME=value\0` over
 * MAX_ARG_STRLEN). Explicit grants pass both lists.
 *
 * Pure; the only side effect is the optional name-and-size WARN for strings
 * the filter drops.
 */

import { displayName } from "../errors.js";
import { ownProperties } from "../known-options.js";
import { MAX_ARG_STRLEN } from "../limits.js";
import { logger as defaultLogger, type Logger } from "../log.js";
import { pairBytes } from "./env-input.js";
import { envMapOf } from "./env-map.js";
import { freezeMap } from "./frozen-map.js";
import { asciiUpper, validateNameList } from "./names.js";

/** Names a Linux process needs to start and find its tools; always inherited. */
export const ESSENTIAL_ENV_NAMES: readonly string[] = Object.freeze([
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "TZ",
  "TMPDIR",
  "TMP",
  "TEMP",
]);

/** Prefixes whose every name is essential on Linux (locale categories, XDG directories). */
export const ESSENTIAL_ENV_PREFIXES: readonly string[] = Object.freeze(["LC_", "XDG_"]);

/** A prototype-free, frozen snapshot of an environment. */
export type EnvSnapshot = ReadonlyMap<string, string>;

/** Why an inherited variable is not in the base. */
export type InheritedDropReason = "not_allowed" | "blocked" | "too_large";

export interface InheritedDrop {
  readonly name: string;
  readonly reason: InheritedDropReason;
  /** Size of `NAME=value\0` in bytes (UTF-8). */
  readonly bytes: number;
}

export interface InheritedOptions {
  /** Allow list: only essentials, these names and grants are inherited. Absent = inherit all. */
  readonly allow?: readonly string[] | undefined;
  /** Block list, applied after the allow list. */
  readonly block?: readonly string[] | undefined;
  /** Names that pass both lists (still subject to the per-string filter). */
  readonly grants?: readonly string[] | undefined;
  /** Prefixes whose names pass both lists, like grants. */
  readonly grantPrefixes?: readonly string[] | undefined;
  /** Match list entries case-insensitively (ASCII), as Windows does. */
  readonly caseInsensitive?: boolean | undefined;
  /** Receives one WARN per string dropped for size (name and bytes only); default the library logger, `false` silences. */
  readonly logger?: Logger | false | undefined;
}

export interface InheritedBase {
  /** The variables kept, in snapshot order. */
  readonly env: EnvSnapshot;
  /** Every variable left out, with its reason, in snapshot order. */
  readonly dropped: readonly InheritedDrop[];
}

/**
 * Snapshots an environment (a record such as process.env, or a Map): own
 * enumerable string keys, undefined values skipped. The result is a frozen
 * copy; later changes to `source` have no effect. Throws InvalidEnvError
 * (naming the variable, never its value) for a name or value that cannot be
 * passed to execve, a non-string value, or a source that is not a record or Map.
 */
export function snapshotEnv(source: unknown, where = "parentEnv"): EnvSnapshot {
  return freezeMap(envMapOf(source, where, false));
}

function nameKey(name: string, caseInsensitive: boolean): string {
  return caseInsensitive ? asciiUpper(name) : name;
}

/** True when `name` is essential on Linux (exact names, LC_*, XDG_*). Pure and total. */
export function isEssentialName(name: string, caseInsensitive = false): boolean {
  const key = nameKey(name, caseInsensitive);
  if (caseInsensitive) {
    if (ESSENTIAL_ENV_NAMES.some((essential) => asciiUpper(essential) === key)) return true;
  } else if (ESSENTIAL_ENV_NAMES.includes(key)) {
    return true;
  }
  return ESSENTIAL_ENV_PREFIXES.some((prefix) => key.startsWith(prefix));
}

/**
 * Builds the inherited base from a snapshot: the allow list (essentials and
 * grants always kept; an empty list keeps only those), then the block list
 * (grants exempt; a name on both lists is not inherited), then the per-string
 * filter (a `NAME=value\0` of more than MAX_ARG_STRLEN bytes is dropped with a
 * WARN carrying name and size; exactly MAX_ARG_STRLEN passes). Lists are
 * validated as by validateNameList (TypeError). Pure apart from the WARN.
 */
export function inheritedBase(snapshot: EnvSnapshot, given: InheritedOptions = {}): InheritedBase {
  // Own properties only (known-options.ts): no inherited list or logger.
  const options = ownProperties(given);
  const caseInsensitive = options.caseInsensitive === true;
  const keyed = (
    list: readonly string[] | undefined,
    label: string,
  ): ReadonlySet<string> | undefined =>
    list === undefined
      ? undefined
      : new Set(validateNameList(list, label).map((name) => nameKey(name, caseInsensitive)));
  const allow = keyed(options.allow, "allow");
  const block = keyed(options.block, "block") ?? new Set<string>();
  const grants = keyed(options.grants, "grants") ?? new Set<string>();
  const grantPrefixes = (
    options.grantPrefixes === undefined
      ? []
      : validateNameList(options.grantPrefixes, "grantPrefixes")
  ).map((prefix) => nameKey(prefix, caseInsensitive));

  const env = new Map<string, string>();
  const dropped: InheritedDrop[] = [];
  for (const [name, value] of snapshot) {
    const key = nameKey(name, caseInsensitive);
    const granted = grants.has(key) || grantPrefixes.some((prefix) => key.startsWith(prefix));
    const bytes = pairBytes(name, value);
    if (
      !granted &&
      allow !== undefined &&
      !allow.has(key) &&
      !isEssentialName(name, caseInsensitive)
    ) {
      dropped.push(Object.freeze({ name, reason: "not_allowed", bytes }));
      continue;
    }
    if (!granted && block.has(key)) {
      dropped.push(Object.freeze({ name, reason: "blocked", bytes }));
      continue;
    }
    if (bytes > MAX_ARG_STRLEN) {
      dropped.push(Object.freeze({ name, reason: "too_large", bytes }));
      if (options.logger !== false) {
        (options.logger ?? defaultLogger()).warn(
          { variable: displayName(name), bytes, limit: MAX_ARG_STRLEN },
          "inherited variable dropped: larger than one exec string may be",
        );
      }
      continue;
    }
    env.set(name, value);
  }
  return Object.freeze({ env: freezeMap(env), dropped: Object.freeze(dropped) });
}
