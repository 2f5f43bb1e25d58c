/**
 * Image restore: a worker that changes its environment for its own tools
 * (strips interpreter-hostile variables, prepends its own directories to
 * PATH-like lists) records what it changed, so that a task command can later
 * run in the environment the image itself defined.
 *
 * Conventions, with P the host prefix (default "EXACTSPAWN_"):
 *   P + "SAVED_" + NAME  the value NAME had before it was stripped
 *   P + "ADDED_" + NAME  the list entries prepended to NAME (separator-joined)
 *
 * Pure; no I/O. Inputs are copied; results are fresh prototype-free Maps.
 */

import { compareNames, InvalidEnvError } from "../errors.js";
import { ownProperties } from "../known-options.js";
import { DEFAULT_HOST_PREFIX } from "./denylist.js";
import { envMapOf } from "./env-map.js";
import { validateNameList } from "./names.js";

export interface ImageRecordOptions {
  /** Variables to strip: exact names and name prefixes (case-sensitive). */
  readonly strip?: { readonly names?: readonly string[]; readonly prefixes?: readonly string[] };
  /** List entries to prepend, per variable (e.g. `{ PATH: ["/opt/tools/bin"] }`). */
  readonly prepends?:
    | Readonly<Record<string, readonly string[]>>
    | ReadonlyMap<string, readonly string[]>;
  /** The tracking prefix. Default "EXACTSPAWN_". */
  readonly prefix?: string;
  /** The list separator. Default ":". */
  readonly separator?: string;
}

export interface ImageRestoreOptions {
  /** The tracking prefix. Default "EXACTSPAWN_". */
  readonly prefix?: string;
  /** The list separator. Default ":". */
  readonly separator?: string;
  /** Caller values applied last (after the restore); may not use the tracking names. */
  readonly extra?: Readonly<Record<string, string | undefined>> | ReadonlyMap<string, string>;
}

interface Tracking {
  readonly saved: string;
  readonly added: string;
  readonly separator: string;
}

function tracking(prefix: unknown, separator: unknown): Tracking {
  const p = prefix ?? DEFAULT_HOST_PREFIX;
  const sep = separator ?? ":";
  if (typeof p !== "string" || p.length === 0 || /[=\0]/.test(p)) {
    throw new TypeError("prefix must be a non-empty string without '=' or NUL");
  }
  if (typeof sep !== "string" || sep.length === 0 || sep.includes("\0")) {
    throw new TypeError("separator must be a non-empty string without NUL");
  }
  return { saved: `${p}SAVED_`, added: `${p}ADDED_`, separator: sep };
}

function isTrackingName(name: string, t: Tracking): boolean {
  return name.startsWith(t.saved) || name.startsWith(t.added);
}

function splitList(value: string | undefined, separator: string): string[] {
  return value === undefined || value === "" ? [] : value.split(separator);
}

function sortedMap(map: Map<string, string>): Map<string, string> {
  return new Map([...map].sort(([a], [b]) => compareNames(a, b)));
}

function entryList(entries: unknown, separator: string): readonly string[] {
  if (!Array.isArray(entries))
    throw new TypeError("prepends: each value must be an array of entries");
  entries.forEach((entry: unknown, index) => {
    if (typeof entry !== "string" || entry.length === 0) {
      throw new TypeError(`prepends: entry ${index} must be a non-empty string`);
    }
    if (entry.includes("\0") || entry.includes(separator)) {
      throw new TypeError(`prepends: entry ${index} must not contain NUL or the list separator`);
    }
  });
  return entries as string[];
}

function prependEntries(
  prepends: ImageRecordOptions["prepends"],
  separator: string,
): [string, readonly string[]][] {
  if (prepends === undefined) return [];
  const pairs: [string, unknown][] =
    prepends instanceof Map
      ? [...prepends]
      : Object.keys(prepends).map((name) => [
          name,
          Object.getOwnPropertyDescriptor(prepends, name)?.value,
        ]);
  return pairs
    .map(([name, entries]): [string, readonly string[]] => {
      validateNameList([name], "prepends names");
      return [name, entryList(entries, separator)];
    })
    .sort(([a], [b]) => compareNames(a, b));
}

/**
 * The recording side, used where a worker builds its own environment from
 * the image's: strips the chosen variables, saving each present one as
 * P+"SAVED_"+NAME, and prepends list entries, recording those it really
 * added (entries already in the list are not added again) as P+"ADDED_"+NAME.
 * A freshly observed value overwrites an inherited SAVED snapshot (the newest
 * observation of the image is authoritative); an absent one leaves it alone.
 * Earlier ADDED records are kept and extended, so nested workers compose.
 *
 * Pure. Throws InvalidEnvError for an unrepresentable env entry and TypeError
 * for malformed options (messages never echo a value).
 */
export function recordImageEnv(env: unknown, given: ImageRecordOptions = {}): Map<string, string> {
  // Own properties only (known-options.ts), the nested strip lists too.
  const options = ownProperties(given);
  const strip = ownProperties(options.strip);
  const t = tracking(options.prefix, options.separator);
  const stripNames = new Set(
    strip?.names === undefined ? [] : validateNameList(strip.names, "strip.names"),
  );
  const stripPrefixes =
    strip?.prefixes === undefined ? [] : validateNameList(strip.prefixes, "strip.prefixes");
  const prepends = prependEntries(options.prepends, t.separator);

  const source = envMapOf(env, "recordImageEnv", false);
  const out = new Map(source);
  for (const [name, value] of source) {
    if (isTrackingName(name, t)) continue;
    if (stripNames.has(name) || stripPrefixes.some((prefix) => name.startsWith(prefix))) {
      out.delete(name);
      out.set(t.saved + name, value);
    }
  }
  for (const [name, entries] of prepends) {
    const current = splitList(out.get(name), t.separator);
    const fresh: string[] = [];
    for (const entry of entries) {
      if (!current.includes(entry) && !fresh.includes(entry)) fresh.push(entry);
    }
    const previous = splitList(out.get(t.added + name), t.separator);
    const recorded = [...fresh, ...previous.filter((entry) => !fresh.includes(entry))];
    if (fresh.length > 0) out.set(name, [...fresh, ...current].join(t.separator));
    if (recorded.length > 0) out.set(t.added + name, recorded.join(t.separator));
  }
  return sortedMap(out);
}

/**
 * Restores the image's own environment from a recorded one: removes every
 * recorded P+"ADDED_" entry from its list (a variable left with no entries is
 * deleted), then restores each P+"SAVED_" value only where the variable is
 * absent (a live value, even an empty one, wins), drops every tracking
 * variable, and applies `extra` last.
 *
 * The result is the whole environment: it is built from `env` and `extra`
 * alone and replaces, never merges with, whatever a child would otherwise
 * inherit. Idempotent: restoring a restored environment (with the same
 * options) changes nothing. Pure. Throws InvalidEnvError for an
 * unrepresentable entry or an `extra` that names a tracking variable, and
 * TypeError for a malformed prefix or separator; never echoes a value.
 */
export function restoreImageEnv(
  env: unknown,
  given: ImageRestoreOptions = {},
): Map<string, string> {
  // Own properties only (known-options.ts).
  const options = ownProperties(given);
  const t = tracking(options.prefix, options.separator);
  const source = envMapOf(env, "restoreImageEnv", false);
  const extra = envMapOf(options.extra, "restoreImageEnv extra", true);
  for (const name of extra.keys()) {
    if (isTrackingName(name, t)) {
      throw new InvalidEnvError(
        "restoreImageEnv extra: a tracking variable cannot be set by the caller",
        name,
      );
    }
  }
  const out = new Map(source);
  for (const [name, value] of source) {
    if (!name.startsWith(t.added)) continue;
    const target = name.slice(t.added.length);
    const live = out.get(target);
    if (target === "" || live === undefined) continue;
    const added = new Set(splitList(value, t.separator));
    const kept = live.split(t.separator).filter((entry) => !added.has(entry));
    if (kept.length === 0 || (kept.length === 1 && kept[0] === "" && live !== "")) {
      out.delete(target);
    } else {
      out.set(target, kept.join(t.separator));
    }
  }
  for (const [name, value] of source) {
    if (!name.startsWith(t.saved)) continue;
    const target = name.slice(t.saved.length);
    if (target !== "" && !isTrackingName(target, t) && !out.has(target)) out.set(target, value);
  }
  for (const name of source.keys()) if (isTrackingName(name, t)) out.delete(name);
  for (const [name, value] of extra) out.set(name, value);
  return sortedMap(out);
}
