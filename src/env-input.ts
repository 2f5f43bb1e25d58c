/**
 * Normalises every accepted environment shape into one validated list of
 * entries, and measures them the way the kernel does.
 *
 * Accepted: a record of name → string | Buffer (undefined skips the name), a
 * Map of the same, or an array of "NAME=value" strings or Buffers. Records are
 * read through their own enumerable keys only, so `__proto__` and
 * `constructor` are ordinary names. Throws `InvalidEnvError` (a TypeError) on
 * anything that cannot be passed to execve byte-exactly; messages name the
 * variable, never its value.
 */
import { Buffer } from "node:buffer";
import { displayName, InvalidEnvError } from "./errors.js";

export type EnvValue = string | Buffer;

/** Everything that can describe a child's whole environment. */
export type EnvInput =
  | Readonly<Record<string, EnvValue | undefined>>
  | ReadonlyMap<string, EnvValue>
  | ReadonlyArray<EnvValue>;

/** One validated variable. `bytes` is the size of `NAME=value\0` in UTF-8. */
export interface EnvEntry {
  readonly name: string;
  readonly value: EnvValue;
  readonly bytes: number;
  /** The whole `NAME=value` bytes when the entry was given as one Buffer (kept byte-exact). */
  readonly raw?: Buffer;
}

const EQUALS = 0x3d;

/** True when `text` contains an unpaired UTF-16 surrogate (it would not encode byte-exactly). */
export function hasLoneSurrogate(text: string): boolean {
  return !text.isWellFormed();
}

/** UTF-8 byte length of a string or Buffer. */
export function byteLength(value: EnvValue): number {
  return typeof value === "string" ? Buffer.byteLength(value, "utf8") : value.length;
}

/** Throws unless `name` can be an environment variable name. */
export function assertEnvName(name: unknown, where = "environment"): asserts name is string {
  if (typeof name !== "string") {
    throw new InvalidEnvError(`${where}: a variable name must be a string, got ${typeof name}`);
  }
  if (name.length === 0) throw new InvalidEnvError(`${where}: a variable name is empty`);
  if (name.includes("=")) {
    throw new InvalidEnvError(`${where}: variable name "${displayName(name)}" contains '='`, name);
  }
  if (name.includes("\0")) {
    throw new InvalidEnvError(`${where}: variable name "${displayName(name)}" contains NUL`, name);
  }
  if (hasLoneSurrogate(name)) {
    throw new InvalidEnvError(
      `${where}: variable name "${displayName(name)}" contains a lone UTF-16 surrogate`,
      name,
    );
  }
}

/** Throws unless `value` can be the value of variable `name`. Never echoes the value. */
export function assertEnvValue(
  name: string,
  value: unknown,
  where = "environment",
): asserts value is EnvValue {
  if (typeof value === "string") {
    if (value.includes("\0")) badValue(where, name, "contains NUL");
    if (hasLoneSurrogate(value)) badValue(where, name, "contains a lone UTF-16 surrogate");
    return;
  }
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) {
    if ((value as Uint8Array).includes(0)) badValue(where, name, "contains NUL");
    return;
  }
  badValue(
    where,
    name,
    `must be a string or Buffer, got ${value === null ? "null" : typeof value}`,
  );
}

// The message is built only on the way to a throw: assertEnvValue runs for every variable.
function badValue(where: string, name: string, problem: string): never {
  throw new InvalidEnvError(`${where}: the value of ${displayName(name)} ${problem}`, name);
}

/** `NAME=value\0` in UTF-8 bytes, unchecked: for names and values validated when their env was built. */
export function pairBytes(name: string, value: string): number {
  return Buffer.byteLength(name, "utf8") + Buffer.byteLength(value, "utf8") + 2;
}

/** Size of `NAME=value\0` as the kernel counts it (UTF-8 bytes). Validates both parts. */
export function envPairBytes(name: string, value: EnvValue): number {
  assertEnvName(name, "envPairBytes");
  assertEnvValue(name, value, "envPairBytes");
  return Buffer.byteLength(name, "utf8") + 1 + byteLength(value) + 1;
}

function entry(name: string, value: unknown, where: string): EnvEntry {
  assertEnvName(name, where);
  assertEnvValue(name, value, where);
  return { name, value, bytes: Buffer.byteLength(name, "utf8") + 1 + byteLength(value) + 1 };
}

function entryFromPair(pair: unknown, index: number, where: string): EnvEntry {
  if (typeof pair === "string") {
    const eq = pair.indexOf("=");
    if (eq <= 0) {
      throw new InvalidEnvError(
        `${where}: entry ${index} is not of the form NAME=value (${eq === 0 ? "empty name" : "no '='"})`,
      );
    }
    const name = pair.slice(0, eq);
    assertEnvName(name, where);
    assertEnvValue(name, pair.slice(eq + 1), where);
    return { name, value: pair.slice(eq + 1), bytes: Buffer.byteLength(pair, "utf8") + 1 };
  }
  if (pair instanceof Uint8Array) {
    const bytes = Buffer.from(pair.buffer, pair.byteOffset, pair.byteLength);
    const eq = bytes.indexOf(EQUALS);
    if (eq <= 0) {
      throw new InvalidEnvError(
        `${where}: entry ${index} is not of the form NAME=value (${eq === 0 ? "empty name" : "no '='"})`,
      );
    }
    const name = bytes.subarray(0, eq).toString("utf8");
    if (bytes.subarray(0, eq).includes(0)) {
      throw new InvalidEnvError(`${where}: the name of entry ${index} contains NUL`);
    }
    const value = bytes.subarray(eq + 1);
    assertEnvValue(name, value, where);
    return { name, value, bytes: bytes.length + 1, raw: bytes };
  }
  throw new InvalidEnvError(
    `${where}: entry ${index} must be a "NAME=value" string or Buffer, got ${pair === null ? "null" : typeof pair}`,
  );
}

/**
 * Validates and lists an environment in its own order. Duplicate names are
 * kept as given (an envp may legally repeat a name; the kernel copies both).
 */
export function envEntries(env: EnvInput, where = "environment"): EnvEntry[] {
  if (Array.isArray(env)) {
    return env.map((pair, index) => entryFromPair(pair, index, where));
  }
  if (env instanceof Map) {
    const out: EnvEntry[] = [];
    for (const [name, value] of env) out.push(entry(name, value, where));
    return out;
  }
  if (env === null || typeof env !== "object") {
    throw new InvalidEnvError(
      `${where}: expected a record, a Map or an array of NAME=value entries, got ${env === null ? "null" : typeof env}`,
    );
  }
  const record = env as Readonly<Record<string, unknown>>;
  const out: EnvEntry[] = [];
  for (const name of Object.keys(record)) {
    const value = Object.getOwnPropertyDescriptor(record, name)?.value;
    if (value === undefined) continue;
    out.push(entry(name, value, where));
  }
  return out;
}

/** Renders validated entries as the envp the child receives ("NAME=value" strings or Buffers). */
export function toEnvp(entries: readonly EnvEntry[]): EnvValue[] {
  return entries.map(({ name, value, raw }) => {
    if (raw !== undefined) return raw;
    if (typeof value === "string") return `${name}=${value}`;
    return Buffer.concat([Buffer.from(`${name}=`, "utf8"), value]);
  });
}
