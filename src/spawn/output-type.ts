/**
 * The type of each captured stream in a result, computed from the options
 * the way spawn applies them at run time (spawn-options.ts, subprocess.ts):
 * - `buffer: false` captures nothing → null;
 * - a stdio slot other than "pipe" ("ignore", "inherit", an fd; slots an
 *   array leaves out are "ignore") is not captured → null;
 * - otherwise `encoding: "buffer"` → Buffer, any other encoding (default
 *   utf8) → string.
 * Options whose types are not literal (e.g. a variable typed SpawnOptions)
 * give the union of what they allow: `string | Buffer | null` at the widest.
 */
import type { Buffer } from "node:buffer";
import type { SubprocessError } from "./spawn-errors.js";
import type { SpawnResult } from "./subprocess.js";

/** `O[K]`, or undefined when O does not mention K (distributes over unions of option types). */
type OptionOf<O, K extends string> = O extends unknown
  ? K extends keyof O
    ? O[K]
    : undefined
  : never;

/** The stdio slot of child fd I under `stdio: S` (undefined: stdout and stderr are pipes). */
type SlotOf<S, I extends 1 | 2> = S extends undefined
  ? "pipe"
  : S extends readonly unknown[]
    ? number extends S["length"]
      ? S[number]
      : `${I}` extends keyof S
        ? S[`${I}`]
        : "ignore"
    : S;

type Captured<Slot, T> = Slot extends "pipe" ? T : null;
type Encoded<E> = E extends "buffer" ? Buffer : string;
type Buffered<B, T> = B extends false ? null : T;

/** What a result holds for child fd I (1: stdout, 2: stderr) under options O. */
export type OutputOf<O, I extends 1 | 2> = Buffered<
  OptionOf<O, "buffer">,
  Captured<SlotOf<OptionOf<O, "stdio">, I>, Encoded<OptionOf<O, "encoding">>>
>;

/** The result type of a run under options O (spawn, runtime.spawn). */
export type ResultOf<O> = SpawnResult<OutputOf<O, 1>, OutputOf<O, 2>>;

/** spawnSync's result under options O: it never returns without having started the child. */
export type SyncResultOf<O> = ResultOf<O> & { readonly pid: number };

/** The SubprocessError a run under options O rejects with: its stdout/stderr typed like the result's. */
export type SubprocessErrorOf<O> = SubprocessError<OutputOf<O, 1>, OutputOf<O, 2>>;

/**
 * The parameter type for options inferred as O: a key `Allowed` does not
 * have is a type error (a generic parameter alone escapes excess-property checks).
 */
export type KnownKeys<O, Allowed> = O & Record<Exclude<keyof O, keyof Allowed>, never>;

/** The options type when none are given. */
export type NoOptions = Record<never, never>;
