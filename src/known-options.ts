/**
 * Strict option objects. Each public API keeps one list of the keys it
 * knows, written next to its option type as a `KnownKeys<T>` record, so the
 * compiler rejects the list when the type gains a key the list lacks; any
 * other key a caller passes (`shell`, `detached`, a typo such as `envv`) is a
 * TypeError naming it, instead of an option silently ignored.
 *
 * Options are read as own properties only, once: a front door copies what
 * it was given into a plan that inherits nothing (ownOptions) and reads nothing
 * else, so a polluted `Object.prototype` (`Object.prototype.sandbox`,
 * `.env`, `.uid`…) chooses no option, and a getter runs once, not once per
 * read (a getter that answers differently at each read cannot pass the
 * checks with one value and reach the child with another).
 */
import { closest } from "./did-you-mean.js";
import { displayName } from "./errors.js";

/** Every key of T, each marked `true`: the list a KnownKeys set is built from. */
export type KnownKeys<T> = { readonly [K in keyof Required<T>]: true };

/** The set of keys of a KnownKeys record (and any extra ones). Pure. */
export function knownKeys<T>(
  keys: KnownKeys<T>,
  ...more: ReadonlySet<string>[]
): ReadonlySet<string> {
  const set = new Set(Object.keys(keys));
  for (const extra of more) for (const key of extra) set.add(key);
  return set;
}

/**
 * What to use instead of a child_process option this library does not take
 * on purpose: appended to the unknown-option error, wherever it is passed.
 */
const INSTEAD: Readonly<Record<string, string>> = {
  shell:
    "nothing here runs a shell for you: use runtime.bash(command) for a bash step " +
    '(or spawn("/bin/sh", ["-c", command]))',
  detached: "use processGroup: true (a process group of its own) or setsid: true (a new session)",
};

/**
 * Throws a TypeError for the first own enumerable key of `options` that
 * `known` lacks, naming the key (escaped, cut at 80 characters) and `where`,
 * the nearest known key when the name looks like a typo of it (`rlimit` →
 * `rlimits`), and for `shell`/`detached` what to use instead. Keys with the value
 * undefined count too: a misspelt option is a bug either way.
 */
export function assertKnownOptions(
  options: object,
  known: ReadonlySet<string>,
  where: string,
): void {
  for (const key of Object.keys(options)) {
    if (!known.has(key)) throw unknownOption(key, known, where);
  }
}

function unknownOption(key: string, known: ReadonlySet<string>, where: string): TypeError {
  const nearest = closest(key, known);
  const instead = Object.hasOwn(INSTEAD, key)
    ? `; ${INSTEAD[key]}`
    : nearest === undefined
      ? ""
      : `; did you mean "${nearest}"?`;
  return new TypeError(`${where}: unknown option "${displayName(key)}"${instead}`);
}

/**
 * The prototype of every plan: empty, frozen, and itself without one, so a
 * key a plan lacks reads as undefined whatever `Object.prototype` holds.
 * Not null itself: V8 keeps an object made with Object.create(null) in its
 * slow dictionary mode, and a spawn reads some thirty options from its plan
 * (measured: 0.87 µs more per normalizeOptions({env, stdio}) with a null
 * prototype, 0.14 µs with this one).
 */
const PLAN_PROTOTYPE: object = Object.freeze(Object.setPrototypeOf({}, null));

/**
 * An option object's own enumerable string-keyed properties, each read once,
 * copied into an object that inherits nothing (PLAN_PROTOTYPE): reading a
 * key it lacks gives undefined, whatever `Object.prototype` holds. Anything but a non-null
 * object is returned as is (the caller's own check names what is wrong).
 * Pure apart from running the caller's getters, each once.
 */
export function ownProperties<T>(value: T): T {
  if (value === null || typeof value !== "object") return value;
  const copy: Record<string, unknown> = Object.create(PLAN_PROTOTYPE);
  for (const key of Object.keys(value)) copy[key] = (value as Record<string, unknown>)[key];
  return copy as T;
}

/**
 * The options a front door reads: ownProperties(options), with the
 * TypeError of assertKnownOptions for a key `known` lacks. `options` must be
 * a non-null object (the caller checks it and names its own error).
 */
export function ownOptions<T extends object>(
  options: T,
  known: ReadonlySet<string>,
  where: string,
): T {
  const plan: Record<string, unknown> = Object.create(PLAN_PROTOTYPE);
  for (const key of Object.keys(options)) {
    if (!known.has(key)) throw unknownOption(key, known, where);
    plan[key] = (options as Record<string, unknown>)[key];
  }
  return plan as T;
}

/**
 * The value of `key` when it is an own data property of `value` (no getter
 * runs, nothing inherited is read); undefined otherwise. For the few reads
 * made outside a front door's plan (releasing pipe ends after a failure).
 */
export function ownDataValue(value: unknown, key: string): unknown {
  if (value === null || typeof value !== "object") return undefined;
  return Object.getOwnPropertyDescriptor(value, key)?.value;
}

/**
 * The items of an option list, a hole read as undefined: never an index
 * inherited from `Array.prototype` or `Object.prototype`. Pure.
 */
export function ownItems(list: readonly unknown[]): unknown[] {
  // Array.from defines each item (no setter or read-only index of a prototype is consulted).
  return Array.from({ length: list.length }, (_, i) =>
    Object.hasOwn(list, i) ? list[i] : undefined,
  );
}
