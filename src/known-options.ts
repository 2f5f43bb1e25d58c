/**
 * Strict option objects. Each public API keeps one list of the keys it
 * knows, written next to its option type as a `KnownKeys<T>` record, so the
 * compiler rejects the list when the type gains a key the list lacks; any
 * other key a caller passes (`shell`, `detached`, a typo such as `envv`) is a
 * TypeError naming it, instead of an option silently ignored.
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
    if (known.has(key)) continue;
    const nearest = closest(key, known);
    const instead = Object.hasOwn(INSTEAD, key)
      ? `; ${INSTEAD[key]}`
      : nearest === undefined
        ? ""
        : `; did you mean "${nearest}"?`;
    throw new TypeError(`${where}: unknown option "${displayName(key)}"${instead}`);
  }
}
