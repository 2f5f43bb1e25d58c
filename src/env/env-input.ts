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
import { displayName, InvalidEnvError } from "../errors.js";
import { isFrozenMap } from "./frozen-map.js";

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

/** Strings at least this long have their UTF-8 length remembered (utf8Bytes). */
const MEMO_MIN_LENGTH = 64 * 1024;
let memoText = "";
let memoBytes = 0;

/**
 * Buffer.byteLength(text, "utf8"), one pass over the text. A big step value
 * is measured by the planner, the budget, the spill plan and the writer in
 * turn: the last long string measured is remembered, so it is scanned once
 * (the same string object compares equal by identity at once) until the
 * current task's microtasks run.
 */
export function utf8Bytes(text: string): number {
  if (text.length < MEMO_MIN_LENGTH) return Buffer.byteLength(text, "utf8");
  if (text.length === memoText.length && text === memoText) return memoBytes;
  memoBytes = Buffer.byteLength(text, "utf8");
  // A step is planned and written in one synchronous call: the value (maybe
  // a secret) is not held past it.
  if (memoText === "") queueMicrotask(forgetMemo);
  memoText = text;
  return memoBytes;
}

function forgetMemo(): void {
  memoText = "";
}

/** UTF-8 byte length of a string or Buffer. */
export function byteLength(value: EnvValue): number {
  return typeof value === "string" ? utf8Bytes(value) : value.length;
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
  return Buffer.byteLength(name, "utf8") + utf8Bytes(value) + 2;
}

/** Size of `NAME=value\0` as the kernel counts it (UTF-8 bytes). Validates both parts. */
export function envPairBytes(name: string, value: EnvValue): number {
  assertEnvName(name, "envPairBytes");
  assertEnvValue(name, value, "envPairBytes");
  return Buffer.byteLength(name, "utf8") + 1 + byteLength(value) + 1;
}

/** Names up to this many units are checked by one loop here (see plainNameBytes). */
const SHORT_NAME = 64;

/**
 * The UTF-8 size of `name` when one short loop proves it a valid name: a
 * string of 1 to SHORT_NAME units, all ASCII (so one byte each and no lone
 * surrogate), neither NUL nor '='. -1 for anything else, which
 * assertEnvName then judges. For a typical name this replaces three scans
 * and a call into C++ (Buffer.byteLength).
 */
function plainNameBytes(name: unknown): number {
  if (typeof name !== "string") return -1;
  const units = name.length;
  if (units === 0 || units > SHORT_NAME) return -1;
  for (let i = 0; i < units; i++) {
    const unit = name.charCodeAt(i);
    if (unit === 0 || unit === EQUALS || unit > 0x7f) return -1;
  }
  return units;
}

function entry(name: string, value: unknown, where: string): EnvEntry {
  let nameBytes = plainNameBytes(name);
  if (nameBytes < 0) {
    assertEnvName(name, where);
    nameBytes = Buffer.byteLength(name, "utf8");
  }
  if (typeof value === "string") {
    if (value.includes("\0")) badValue(where, name, "contains NUL");
    if (!value.isWellFormed()) badValue(where, name, "contains a lone UTF-16 surrogate");
    return { name, value, bytes: nameBytes + utf8Bytes(value) + 2 };
  }
  assertEnvValue(name, value, where);
  return { name, value, bytes: nameBytes + 1 + byteLength(value) + 1 };
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

/** Sizes of a validated environment: Σ `NAME=value\0` bytes and the longest such string. */
export interface EnvTotals {
  readonly bytes: number;
  readonly largest: number;
}

/** Entries validated once per frozen input, by that input. */
const entriesOf = new WeakMap<object, readonly EnvEntry[]>();
/** Totals of the entry lists in entriesOf, by list. */
const totalsOf = new WeakMap<readonly EnvEntry[], EnvTotals>();

/**
 * True when `env` cannot change after it is read: a frozen record or array
 * whose every value is a string (a Buffer's bytes stay mutable), or a map
 * freezeMap froze (any other Map's entries stay mutable, whatever
 * Object.freeze says).
 */
function immutableEnv(env: object): boolean {
  if (env instanceof Map) return isFrozenMap(env);
  if (!Object.isFrozen(env)) return false;
  if (Array.isArray(env)) {
    for (const pair of env) if (typeof pair !== "string") return false;
    return true;
  }
  for (const name of Object.keys(env)) {
    const value = Object.getOwnPropertyDescriptor(env, name)?.value;
    if (value !== undefined && typeof value !== "string") return false;
  }
  return true;
}

/**
 * envEntries, validated once per environment that cannot change (a frozen
 * record or array of strings, such as a runtime's snapshot): later calls with
 * the same object return the same frozen list without reading it again.
 * Any other input is validated afresh. Throws as envEntries does.
 */
export function envEntriesOnce(env: EnvInput, where = "environment"): readonly EnvEntry[] {
  if (env === null || typeof env !== "object") return envEntries(env, where);
  const known = entriesOf.get(env);
  if (known !== undefined) return known;
  const entries = envEntries(env, where);
  if (!immutableEnv(env)) return entries;
  let bytes = 0;
  let largest = 0;
  for (const e of entries) {
    Object.freeze(e);
    bytes += e.bytes;
    if (e.bytes > largest) largest = e.bytes;
  }
  Object.freeze(entries);
  entriesOf.set(env, entries);
  totalsOf.set(entries, { bytes, largest });
  return entries;
}

/** The totals of a list returned by envEntriesOnce for a frozen input; undefined otherwise. */
export function knownEnvTotals(entries: readonly EnvEntry[]): EnvTotals | undefined {
  return totalsOf.get(entries);
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

/**
 * Strings packed for the addon: each one's bytes followed by NUL, in order,
 * in one Buffer, and how many there are (the addon checks the count, so a NUL
 * inside a string can never pass as two strings).
 */
export interface PackedStrings {
  readonly bytes: Buffer;
  readonly count: number;
}

const EMPTY_PACK: PackedStrings = Object.freeze({ bytes: Buffer.alloc(0), count: 0 });

/**
 * A reusable Buffer for packs that live only until the next pack of the same
 * kind (the engines hand them to the addon at once; it reads them during the
 * call and keeps nothing). A fresh Buffer per spawn cost a megabyte of page
 * faults and zeroing per megabyte packed; this one is reused while spawns
 * keep coming and, held weakly, freed by a later full GC once they stop.
 */
class Scratch {
  #ref: WeakRef<Buffer> | undefined;
  get(size: number): Buffer {
    if (size < SCRATCH_FROM) return Buffer.allocUnsafe(size);
    let buffer = this.#ref?.deref();
    if (buffer === undefined || buffer.length < size) {
      buffer = Buffer.allocUnsafeSlow(size);
      this.#ref = new WeakRef(buffer);
    }
    return buffer;
  }
}

/** Below this, Buffer's own pool (or one small allocation) is as cheap. */
const SCRATCH_FROM = 4096;
const argvScratch = new Scratch();
const envpScratch = new Scratch();

/** Packed envps of the frozen entry lists (see envEntriesOnce), by list. */
const packedOf = new WeakMap<readonly EnvEntry[], PackedStrings>();

const EQUALS_SIGN = 0x3d;
/**
 * Units of ASCII `NAME=value\0` strings joined before one write: few calls
 * into C++, and each joined string small enough for V8's young generation
 * (one string of the whole envp, a megabyte, cost more than it saved).
 */
const CHUNK_UNITS = 16_384;

/**
 * How to write strings whose exact UTF-8 size is `bytes` and whose UTF-16
 * length is `units`: equal only when every character is ASCII, and then
 * latin1 writes the same bytes, copied without encoding.
 */
function encodingFor(bytes: number, units: number): "latin1" | "utf8" {
  return bytes === units ? "latin1" : "utf8";
}

/**
 * The envp of validated entries packed for the addon: byte-exact, in order,
 * written straight into one Buffer of the size the entries already know
 * (ASCII variables joined a chunk at a time, each chunk one write; any other
 * variable written in place). Computed once per list that
 * envEntriesOnce froze; any other list's bytes are valid until the next
 * call (a reused Buffer): hand them over at once. Total; the entries'
 * validation guarantees no NUL inside a string.
 */
export function packedEnvp(entries: readonly EnvEntry[]): PackedStrings {
  const known = packedOf.get(entries);
  if (known !== undefined) return known;
  const count = entries.length;
  if (count === 0) return EMPTY_PACK;
  let total = 0;
  for (let i = 0; i < count; i++) total += entries[i]!.bytes;
  // A frozen list's pack is kept; any other is used once, right away.
  const keep = Object.isFrozen(entries);
  const bytes = keep ? Buffer.allocUnsafe(total) : envpScratch.get(total);
  let at = 0;
  // ASCII entries are written a chunk at a time: one call into C++ per chunk
  // instead of two per variable (the calls, not the copying, were the cost).
  let chunk = "";
  for (let i = 0; i < count; i++) {
    const { name, value, raw, bytes: size } = entries[i]!;
    if (typeof value === "string" && size === name.length + value.length + 2) {
      chunk += `${name}=${value}\0`;
      if (chunk.length >= CHUNK_UNITS) {
        at += bytes.write(chunk, at, "latin1");
        chunk = "";
      }
      continue;
    }
    if (chunk !== "") {
      at += bytes.write(chunk, at, "latin1");
      chunk = "";
    }
    if (raw !== undefined) {
      bytes.set(raw, at);
      at += raw.length;
    } else if (typeof value === "string") {
      at += bytes.write(name, at, "utf8");
      bytes[at++] = EQUALS_SIGN;
      at += bytes.write(value, at, "utf8");
    } else {
      at += bytes.write(name, at, "utf8");
      bytes[at++] = EQUALS_SIGN;
      bytes.set(value, at);
      at += value.length;
    }
    bytes[at++] = 0;
  }
  if (chunk !== "") at += bytes.write(chunk, at, "latin1");
  if (at !== total)
    throw new Error("exactspawn: an environment entry's size changed while packing");
  if (!keep) return { bytes: bytes.length === total ? bytes : bytes.subarray(0, total), count };
  const packed: PackedStrings = Object.freeze({ bytes, count });
  packedOf.set(entries, packed);
  return packed;
}

/**
 * argv (or any list of strings and Buffers) packed for the addon: each
 * string's UTF-8 bytes and a NUL, written straight into one Buffer. `size`,
 * when given, is the exact total (NULs included) of a list already validated
 * by the exec-size model (footprintOf: no NUL, no lone surrogate), which is
 * then not scanned again; without it every string is checked and a TypeError
 * names `where[index]` for one that contains NUL. The bytes are valid until
 * the next call (they may be a reused Buffer): hand them over at once.
 */
export function packStrings(
  list: ReadonlyArray<string | Buffer>,
  where: string,
  size?: number,
): PackedStrings {
  const count = list.length;
  if (count === 0) return EMPTY_PACK;
  let bound = size ?? 0;
  if (size === undefined) {
    for (let i = 0; i < count; i++) {
      const item = list[i]!;
      if (typeof item === "string" ? item.includes("\0") : item.includes(0)) {
        throw new TypeError(`${where}[${i}] contains a NUL byte`);
      }
      // UTF-8 takes at most 3 bytes per UTF-16 unit (a pair: 4 for 2).
      bound += (typeof item === "string" ? item.length * 3 : item.length) + 1;
    }
  }
  // With the exact size known, one check covers the whole list (a Buffer's
  // length is its size, so only strings can make the two differ).
  let units = 0;
  if (size !== undefined) for (let i = 0; i < count; i++) units += list[i]!.length + 1;
  const encoding = size === undefined ? "utf8" : encodingFor(size, units);
  const bytes = argvScratch.get(bound);
  let at = 0;
  for (let i = 0; i < count; i++) {
    const item = list[i]!;
    if (typeof item === "string") {
      at += bytes.write(item, at, encoding);
    } else {
      bytes.set(item, at);
      at += item.length;
    }
    bytes[at++] = 0;
  }
  if (size !== undefined && at !== size) {
    throw new Error(`exactspawn: ${where} changed size while packing`);
  }
  return { bytes: at === bytes.length ? bytes : bytes.subarray(0, at), count };
}
