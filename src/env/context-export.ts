/**
 * Context export: turns an untrusted context map (task description, repo
 * path, issue number, …) into environment pairs a bash step can read.
 *
 * Each key is ASCII upper-cased and, in the default namespace mode, put under
 * one prefix (`CTX_`) unless the host declared it as a bare name; then checked
 * against the shell-identifier rule and the denylist, and its value checked
 * for safety, representability and size. Bare names for every key ("bare"
 * mode) are the upstream behaviour, offered by the runtime only through its
 * compatibility preset, because they are safe only as far as the denylist reaches. Entries that fail are
 * skipped — never fatal — and returned as data as well as logged by name and
 * reason (never by value).
 */

import { Buffer } from "node:buffer";
import { types } from "node:util";
import { compareNames, displayName } from "../errors.js";
import { ownProperties } from "../known-options.js";
import { PER_VALUE_ENV_CAP } from "../limits.js";
import { logger as defaultLogger, type Logger } from "../log.js";
import {
  createDenylist,
  type Denylist,
  type DenylistOptions,
  isUnsafeValue,
  matchesDenylist,
} from "./denylist.js";
import { asciiUpper, isUpperIdentifier } from "./names.js";

/** Why a context key was not exported. Checked in this order; the first failure wins. */
export type ContextSkipReason =
  /** The exported name is empty, starts with a digit or has a character outside [A-Z0-9_]. */
  | "invalid_identifier"
  /** Allow-list mode only: the name is not on the context allow list. */
  | "not_allowed"
  /** The name is on the denylist (exact, prefix or suffix, host and step prefixes included). */
  | "reserved_name"
  /** Not a string, finite number, boolean or bigint; an accessor; or a string that is not well-formed UTF-16. */
  | "unsupported_value"
  /** A shell function body (`() {`), or a `/` in LANG, LANGUAGE, LC_* or TZ. */
  | "unsafe_value"
  /** The value contains NUL and cannot be carried by an environment string. */
  | "value_contains_nul"
  /** `NAME=value\0` is over PER_VALUE_ENV_CAP bytes. */
  | "value_too_large"
  /** Another key, later in sorted key order, produced the same name and was exported instead. */
  | "superseded"
  /** A bare name the host did not declare (refused by the layering, defence in depth). */
  | "undeclared_name"
  /** Skipped so that the step fits the exec limit: untrusted bytes never evict trusted ones. */
  | "aggregate_env_budget"
  /** Beyond the runtime's maxUntrustedKeys (step values are kept first, then context in name order). */
  | "too_many_keys";

/** One key that was not exported. `key` is the original key, `name` the candidate env name. */
export interface ContextSkip {
  readonly key: string;
  readonly name: string;
  readonly reason: ContextSkipReason;
}

export interface ContextExport {
  /** Exported pairs, sorted by name (code unit order), names unique. */
  readonly pairs: readonly (readonly [name: string, value: string])[];
  /** Every key not exported, in sorted key order. */
  readonly skipped: readonly ContextSkip[];
}

/**
 * How context names are formed:
 * - "namespace" (the default): the upper-cased key under `namespace`
 *   (`CTX_TASK_DESCRIPTION`), except the bare names the host declared in `bare`;
 * - "allowlist": bare names, but only those listed in `allow` or `bare`;
 * - "bare": the upper-cased key (`task_description` → `TASK_DESCRIPTION`), the
 *   upstream recipe runner's behaviour, safe only as far as the denylist reaches
 *   (the runtime offers it only through the "recipe-runner-compat" preset).
 */
export type ContextMode = "bare" | "namespace" | "allowlist";

export interface ContextExportOptions {
  readonly mode?: ContextMode;
  /** The prefix for "namespace" mode. Default "CTX_". */
  readonly namespace?: string;
  /** The exported names allowed in "allowlist" mode (upper-cased before matching). */
  readonly allow?: readonly string[];
  /**
   * Host-declared bare names (upper-cased): in "namespace" mode a key that
   * upper-cases to one of them is exported bare instead of namespaced; in
   * "allowlist" mode they are allowed like `allow`. A reserved name is a TypeError.
   */
  readonly bare?: readonly string[];
  /** A compiled denylist, or additions to the core (and the host/step prefixes). */
  readonly denylist?: Denylist | DenylistOptions;
  /** Where skip notices go; default the library logger. `false` silences them. */
  readonly logger?: Logger | false;
}

/** Accepted context shapes: a plain record (own enumerable string keys) or a Map. */
export type ContextInput = Readonly<Record<string, unknown>> | ReadonlyMap<unknown, unknown>;

/** A context exporter with its options compiled once. */
export type ContextExporter = (context: unknown) => ContextExport;

const DEFAULT_NAMESPACE = "CTX_";
const SKIP_MESSAGE = "context key skipped for env export";

/** A value read from the context, or a marker that it could not be read as a value. */
type RawValue = { readonly ok: true; readonly value: unknown } | { readonly ok: false };

interface RawEntry {
  readonly key: string;
  readonly raw: RawValue;
  /** False when the key itself was not a string (a Map key). */
  readonly keyIsString: boolean;
}

/** A stand-in for a non-string Map key: its type only, so none of its code (toString, Symbol.toPrimitive) runs. */
function keyPlaceholder(value: unknown): string {
  return `[${value === null ? "null" : typeof value}]`;
}

/**
 * Lists the context's entries without running any of its code (no getters,
 * no overridden iterators), in code-unit order of their keys. A record's
 * keys are unique strings: they are sorted by the engine's own string sort
 * (the order compareNames gives) before they are read, with no comparator
 * call per comparison; a Map's entries (keys may repeat as placeholders)
 * are sorted stably by key.
 */
function readEntries(context: unknown): RawEntry[] {
  const out: RawEntry[] = [];
  if (context === null || typeof context !== "object") return out;
  try {
    // A realm-safe brand check: a Map from another context (vm, worker) is still a Map.
    if (types.isMap(context)) {
      Map.prototype.forEach.call(context, (value: unknown, key: unknown) => {
        const keyIsString = typeof key === "string";
        out.push({
          key: keyIsString ? (key as string) : keyPlaceholder(key),
          raw: { ok: true, value },
          keyIsString,
        });
      });
      return out.sort((a, b) => compareNames(a.key, b.key));
    }
    for (const key of Object.keys(context).sort()) {
      let raw: RawValue;
      try {
        const descriptor = Object.getOwnPropertyDescriptor(context, key);
        raw =
          descriptor !== undefined && "value" in descriptor
            ? { ok: true, value: descriptor.value }
            : { ok: false };
      } catch {
        raw = { ok: false };
      }
      out.push({ key, raw, keyIsString: true });
    }
  } catch {
    // A hostile object (a Proxy whose traps throw): export what was read so
    // far (a Map's forEach cannot throw part-way: what it gave is sorted).
  }
  return out;
}

/** The string form of an exportable value, or undefined for anything else. */
function valueText(raw: RawValue): string | undefined {
  if (!raw.ok) return undefined;
  const { value } = raw;
  switch (typeof value) {
    case "string":
      return value.isWellFormed() ? value : undefined;
    case "number":
      return Number.isFinite(value) ? String(value) : undefined;
    case "boolean":
    case "bigint":
      return String(value);
    default:
      return undefined;
  }
}

function validatedNames(list: unknown, label: string): ReadonlySet<string> {
  if (list === undefined) return new Set();
  if (!Array.isArray(list)) throw new TypeError(`${label} must be an array of names`);
  return new Set(
    list.map((item, index) => {
      if (typeof item !== "string" || !isUpperIdentifier(asciiUpper(item))) {
        throw new TypeError(`${label} entry ${index} is not a shell identifier`);
      }
      return asciiUpper(item);
    }),
  );
}

/**
 * Compiles export options once and returns the exporter. Throws TypeError for
 * malformed options (unknown mode, a namespace that is not an identifier or
 * is itself reserved, an allow-list entry that is not an identifier or is
 * reserved). The returned function is total and deterministic.
 */
export function createContextExporter(given: ContextExportOptions = {}): ContextExporter {
  // Own properties only: an inherited `mode: "bare"` or `namespace` chooses nothing.
  const options = ownProperties(given);
  const mode: ContextMode = options.mode ?? "namespace";
  if (mode !== "bare" && mode !== "namespace" && mode !== "allowlist") {
    throw new TypeError('context mode must be "bare", "namespace" or "allowlist"');
  }
  const denylist = createDenylist(options.denylist ?? {});
  let namespace = "";
  if (mode === "namespace") {
    if (options.namespace !== undefined && typeof options.namespace !== "string") {
      throw new TypeError("context namespace must be a string");
    }
    namespace = asciiUpper(options.namespace ?? DEFAULT_NAMESPACE);
    if (!isUpperIdentifier(namespace) || matchesDenylist(`${namespace}X`, denylist)) {
      throw new TypeError("context namespace must be a shell identifier that is not reserved");
    }
  }
  const bare = validatedNames(options.bare, "context bare names");
  const allow = new Set([...validatedNames(options.allow, "context allow list"), ...bare]);
  for (const name of allow) {
    if (matchesDenylist(name, denylist)) {
      throw new TypeError(`context allow list names a reserved variable: ${displayName(name)}`);
    }
  }
  const log = options.logger;

  return (context: unknown): ContextExport => {
    const entries = readEntries(context);
    const exported = new Map<string, { key: string; value: string }>();
    const skipped: ContextSkip[] = [];
    const skip = (key: string, name: string, reason: ContextSkipReason): void => {
      skipped.push(Object.freeze({ key, name, reason }));
    };
    for (const { key, raw, keyIsString } of entries) {
      const upper = asciiUpper(key);
      const isBare = mode !== "namespace" || bare.has(upper);
      const name = isBare ? upper : namespace + upper;
      const reason = checkEntry(name, isBare, keyIsString, raw, mode, allow, denylist);
      if (typeof reason === "string") {
        skip(key, name, reason);
        continue;
      }
      const previous = exported.get(name);
      if (previous !== undefined) skip(previous.key, name, "superseded");
      exported.set(name, { key, value: reason.value });
    }
    // Names are unique (Map keys): the engine's own string sort is code-unit order.
    const pairs = [...exported.keys()]
      .sort()
      .map((name) => Object.freeze([name, exported.get(name)!.value] as const));
    if (log !== false) {
      const sink = log ?? defaultLogger();
      for (const { name, reason } of skipped)
        sink.warn({ variable: displayName(name), reason }, SKIP_MESSAGE);
    }
    return Object.freeze({ pairs: Object.freeze(pairs), skipped: Object.freeze(skipped) });
  };
}

function checkEntry(
  name: string,
  isBare: boolean,
  keyIsString: boolean,
  raw: RawValue,
  mode: ContextMode,
  allow: ReadonlySet<string>,
  denylist: Denylist,
): ContextSkipReason | { value: string } {
  if (!keyIsString || !isUpperIdentifier(name)) return "invalid_identifier";
  if (mode === "allowlist" && !allow.has(name)) return "not_allowed";
  if (matchesDenylist(name, denylist, { suffixes: isBare })) return "reserved_name";
  const value = valueText(raw);
  if (value === undefined) return "unsupported_value";
  if (isUnsafeValue(name, value)) return "unsafe_value";
  if (value.includes("\0")) return "value_contains_nul";
  // NAME=value\0 in UTF-8; the name is ASCII by now.
  if (name.length + 2 + Buffer.byteLength(value, "utf8") > PER_VALUE_ENV_CAP) {
    return "value_too_large";
  }
  return { value };
}

let defaultExporter: ContextExporter | undefined;

/**
 * Exports a context as environment pairs: by default every name under the
 * `CTX_` namespace, except the bare names listed in `options.bare`.
 *
 * Total and deterministic in `context`: any value at all is accepted (a
 * record's own enumerable string keys, a Map's entries; anything else yields
 * no pairs), getters and overridden iterators are never run, and nothing is
 * thrown. Keys are processed in code-unit order; when two keys produce the
 * same name the later one wins (the earlier is reported as "superseded").
 * Strings are exported unchanged; finite numbers, booleans and bigints as
 * String(value); other values are skipped as "unsupported_value". Pure apart
 * from one WARN log event per skipped key carrying only `name` and `reason`.
 *
 * Throws TypeError only for malformed `options` (see createContextExporter).
 */
export function contextEnvPairs(context: unknown, options?: ContextExportOptions): ContextExport {
  if (options === undefined) {
    defaultExporter ??= createContextExporter();
    return defaultExporter(context);
  }
  return createContextExporter(options)(context);
}
