/**
 * Name rules shared by every environment policy: the shell-identifier rule,
 * spillable names (a value can be read back into a bash variable of that
 * name) and protected names (never trimmed to fit the budget).
 *
 * Pure; no I/O. Every list here is a default a runtime can extend.
 */

/** `^[A-Z_][A-Z0-9_]*$`: a POSIX shell identifier in upper case. */
const UPPER_IDENTIFIER = /^[A-Z_][A-Z0-9_]*$/;
/** A bash-assignable identifier (ASCII only). */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** Upper-cases ASCII letters only; every other character is left as is. */
export function asciiUpper(name: string): string {
  // For pure-ASCII text toUpperCase maps exactly a-z (the fast, common path).
  if (ASCII_ONLY.test(name)) return name.toUpperCase();
  return name.replace(/[a-z]+/g, (run) => run.toUpperCase());
}

/** True when `name` (already upper-cased) is a valid exported-variable identifier. */
export function isUpperIdentifier(name: string): boolean {
  return UPPER_IDENTIFIER.test(name);
}

/**
 * Bash variables the preamble cannot assign (read-only, special, or
 * changing the shell's own parsing), so a spilled value could not come back
 * under these names. `_` is beyond the recipe runner's list: bash sets `$_` to the
 * last argument of every command it runs, so a value read into `_` by the
 * preamble is gone before the step's command can see it (found by the fuzz).
 * `LC_ALL`: assigning it makes bash change its locale in the middle of the
 * preamble, between the other assignments; it is never spilled, so no value
 * read back is handled under a locale another value chose.
 */
export const UNSPILLABLE_NAMES: ReadonlySet<string> = new Set([
  "IFS",
  "PATH",
  "HOME",
  "EUID",
  "PPID",
  "SHELLOPTS",
  "UID",
  "GROUPS",
  "FUNCNAME",
  "LINENO",
  "RANDOM",
  "SRANDOM",
  "SECONDS",
  "EPOCHSECONDS",
  "EPOCHREALTIME",
  "HISTCMD",
  "DIRSTACK",
  "OPTIND",
  "OPTARG",
  "PS4",
  "ENV",
  "POSIXLY_CORRECT",
  "CDPATH",
  "GLOBIGNORE",
  "_",
  "LC_ALL",
]);

/** Prefixes of bash's own variables (BASHOPTS, BASHPID, BASH_*, COMP_*). */
export const UNSPILLABLE_PREFIXES: readonly string[] = ["BASH", "COMP_"];

/**
 * True when a value can be spilled to a file and read back into a bash
 * variable of this name: an ASCII identifier, not special to bash.
 */
export function isSpillableName(name: string): boolean {
  if (typeof name !== "string" || !IDENTIFIER.test(name)) return false;
  if (UNSPILLABLE_NAMES.has(name)) return false;
  return !UNSPILLABLE_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/** Names and prefixes that budget trimming never drops. */
export interface ProtectedNames {
  readonly names: readonly string[];
  readonly prefixes: readonly string[];
}

/**
 * The default protected set: PATH and HOME (binary resolution and nested
 * execution), the common task context names, and the host's own prefix and
 * the step-value prefix. `hostPrefix` defaults to "EXACTSPAWN_".
 */
export function defaultProtectedNames(
  hostPrefix = "EXACTSPAWN_",
  stepPrefix = "RECIPE_VAR_",
): ProtectedNames {
  return {
    names: ["PATH", "HOME", "TASK_DESCRIPTION", "REPO_PATH", "TASK_TYPE", "WORKSTREAM_COUNT"],
    prefixes: [hostPrefix, stepPrefix],
  };
}

/** True when `name` is in `protectedNames` by exact name or prefix. */
export function isProtectedName(name: string, protectedNames: ProtectedNames): boolean {
  return (
    protectedNames.names.includes(name) ||
    protectedNames.prefixes.some((prefix) => name.startsWith(prefix))
  );
}

/**
 * Validates a list of names given at construction: an array of non-empty
 * strings without '=' or NUL. Returns a frozen copy. Throws TypeError whose
 * message names the list and index only, never an entry.
 */
export function validateNameList(list: unknown, label: string): readonly string[] {
  if (!Array.isArray(list)) throw new TypeError(`${label} must be an array of names`);
  const out: string[] = [];
  for (let index = 0; index < list.length; index++) {
    const item: unknown = list[index];
    if (typeof item !== "string" || item.length === 0) {
      throw new TypeError(`${label}[${index}] must be a non-empty string`);
    }
    if (item.includes("=") || item.includes("\0")) {
      throw new TypeError(`${label}[${index}] must not contain '=' or NUL`);
    }
    out.push(item);
  }
  return Object.freeze(out);
}
