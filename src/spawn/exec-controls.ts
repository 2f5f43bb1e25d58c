/**
 * The exec controls of `spawn`: credentials, umask, resource limits, nice,
 * no_new_privs and a parent-death signal, applied in the child between fork
 * and exec. Validation only (pure apart from reading the caller's uid):
 * TypeError for a wrong type or unknown name, RangeError for a value out of
 * range; never coerces. See docs/spawn.md, "Exec controls".
 */
import { ownItems } from "../known-options.js";
import { signalNumber } from "./signals.js";

/** Every resource getrlimit(2) documents for Linux, by its prlimit(1) name. */
export const RLIMIT_NAMES = [
  "as",
  "core",
  "cpu",
  "data",
  "fsize",
  "locks",
  "memlock",
  "msgqueue",
  "nice",
  "nofile",
  "nproc",
  "rss",
  "rtprio",
  "rttime",
  "sigpending",
  "stack",
] as const;

export type RlimitName = (typeof RLIMIT_NAMES)[number];

/** One limit: soft = hard = n, or [soft, hard]. `Infinity` is unlimited. */
export type RlimitValue = number | readonly [soft: number, hard: number];

export interface ExecControlOptions {
  /** The child's real, effective and saved uid (setresuid). Default: the parent's. */
  uid?: number;
  /** The child's real, effective and saved gid (setresgid). Default: the parent's. */
  gid?: number;
  /**
   * Supplementary groups (setgroups). Default: the parent's, except that a
   * root parent setting `uid` or `gid` drops them all (as Rust's Command and
   * libuv do).
   */
  groups?: readonly number[];
  /** The child's file-mode creation mask, 0 to 0o7777. Default: the parent's. */
  umask?: number;
  /** Per-resource limits set in the child before exec (prlimit). */
  rlimits?: Partial<Record<RlimitName, RlimitValue>>;
  /** The child's nice value, -20 to 19 (setpriority). Default: the parent's. */
  nice?: number;
  /** PR_SET_NO_NEW_PRIVS: exec can never grant more privileges (setuid bits, file caps). */
  noNewPrivileges?: boolean;
  /** PR_SET_PDEATHSIG: signal sent to the child when the thread that spawned it exits. */
  parentDeathSignal?: string | number;
}

/** The validated controls; `undefined` fields are left as the parent has them. */
export interface ExecControls {
  readonly uid: number | undefined;
  readonly gid: number | undefined;
  /** [] also when a root parent sets uid or gid without groups. */
  readonly groups: readonly number[] | undefined;
  readonly umask: number | undefined;
  readonly rlimits: ReadonlyArray<readonly [RlimitName, number, number]>;
  readonly nice: number | undefined;
  readonly noNewPrivileges: boolean;
  readonly parentDeathSignal: number | undefined;
}

/** 2^32 - 1 is (uid_t)-1, "leave unchanged", to the kernel. */
const MAX_ID = 0xffff_fffe;
/** The kernel's NGROUPS_MAX. */
const MAX_GROUPS = 65_536;

const KNOWN = new Set<string>(RLIMIT_NAMES);

function integer(value: unknown, name: string, low: number, high: number): number {
  if (typeof value !== "number") throw new TypeError(`spawn: options.${name} must be a number`);
  if (!Number.isInteger(value) || value < low || value > high) {
    throw new RangeError(`spawn: options.${name} must be an integer from ${low} to ${high}`);
  }
  return value;
}

function limitNumber(value: unknown, name: string): number {
  if (typeof value !== "number") throw new TypeError(`spawn: options.${name} must be a number`);
  if (value === Number.POSITIVE_INFINITY) return value;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`spawn: options.${name} must be a whole number >= 0 or Infinity`);
  }
  return value;
}

function rlimitEntries(value: unknown): Array<readonly [RlimitName, number, number]> {
  if (value === undefined) return [];
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new TypeError("spawn: options.rlimits must be an object of limits by name");
  }
  const entries: Array<readonly [RlimitName, number, number]> = [];
  for (const [key, limit] of Object.entries(value)) {
    if (!KNOWN.has(key)) throw new TypeError(`spawn: options.rlimits.${key} is not a resource`);
    const name = `rlimits.${key}`;
    let soft: number;
    let hard: number;
    if (Array.isArray(limit)) {
      if (limit.length !== 2) throw new TypeError(`spawn: options.${name} must be [soft, hard]`);
      soft = limitNumber(limit[0], `${name}[0]`);
      hard = limitNumber(limit[1], `${name}[1]`);
      if (soft > hard) throw new RangeError(`spawn: options.${name}: soft exceeds hard`);
    } else {
      soft = hard = limitNumber(limit, name);
    }
    entries.push([key as RlimitName, soft, hard]);
  }
  return entries;
}

function groupList(value: unknown): number[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw new TypeError("spawn: options.groups must be an array");
  if (value.length > MAX_GROUPS) {
    throw new RangeError(`spawn: options.groups has more than ${MAX_GROUPS} entries`);
  }
  return ownItems(value).map((gid, i) => integer(gid, `groups[${i}]`, 0, MAX_ID));
}

/**
 * The stack soft limit the child sets for itself before its exec (bytes,
 * Infinity for unlimited), or undefined: what its exec budget depends on
 * (limitsWithChildStack in limits.ts). Pure.
 */
export function childStackSoft(controls: ExecControls | undefined): number | undefined {
  return controls?.rlimits.find(([name]) => name === "stack")?.[1];
}

/**
 * Validates the exec controls of `options`, a front door's plan (own
 * properties only, nothing inherited: ownOptions in known-options.ts); undefined
 * when none is set (the spawn then needs none of them). Throws
 * TypeError/RangeError naming the option.
 */
export function normalizeExecControls(options: ExecControlOptions): ExecControls | undefined {
  const o = options;
  if (
    o.uid === undefined &&
    o.gid === undefined &&
    o.groups === undefined &&
    o.umask === undefined &&
    o.rlimits === undefined &&
    o.nice === undefined &&
    o.noNewPrivileges === undefined &&
    o.parentDeathSignal === undefined
  ) {
    return undefined;
  }
  const uid = o.uid === undefined ? undefined : integer(o.uid, "uid", 0, MAX_ID);
  const gid = o.gid === undefined ? undefined : integer(o.gid, "gid", 0, MAX_ID);
  let groups = groupList(o.groups);
  // A root parent's own supplementary groups must not survive a uid change.
  if (
    groups === undefined &&
    (uid !== undefined || gid !== undefined) &&
    process.getuid?.() === 0
  ) {
    groups = [];
  }
  if (o.noNewPrivileges !== undefined && typeof o.noNewPrivileges !== "boolean") {
    throw new TypeError("spawn: options.noNewPrivileges must be a boolean");
  }
  let parentDeathSignal: number | undefined;
  if (o.parentDeathSignal !== undefined) {
    parentDeathSignal = signalNumber(o.parentDeathSignal, "spawn: options.parentDeathSignal");
    if (parentDeathSignal === 0) {
      throw new RangeError("spawn: options.parentDeathSignal must be a signal, not 0");
    }
  }
  return {
    uid,
    gid,
    groups,
    umask: o.umask === undefined ? undefined : integer(o.umask, "umask", 0, 0o7777),
    rlimits: rlimitEntries(o.rlimits),
    nice: o.nice === undefined ? undefined : integer(o.nice, "nice", -20, 19),
    noNewPrivileges: o.noNewPrivileges ?? false,
    parentDeathSignal,
  };
}
