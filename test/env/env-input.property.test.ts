/**
 * The envp and the errors of envEntries + packedEnvp against an oracle built
 * from outside their bulk paths: each variable checked on its own with
 * assertEnvName / assertEnvValue, in order, and its bytes encoded on its own
 * by Buffer.from. Arbitrary names and values: ASCII, non-ASCII, lone
 * surrogates, NUL, '=', empty values, Buffers, undefined, values long enough
 * to span several of packedEnvp's chunks.
 */
import { Buffer } from "node:buffer";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  assertEnvName,
  assertEnvValue,
  type EnvValue,
  envEntries,
  packedEnvp,
} from "../../src/env/env-input.js";

const WHERE = "spawn: options.env";

const unit = fc.oneof(
  { arbitrary: fc.constantFrom("A", "B", "x", "_", "1"), weight: 12 },
  {
    arbitrary: fc.constantFrom("=", "\0", "\ud800", "\udc00", "é", "😀", "\u0080", "ÿ"),
    weight: 1,
  },
);
const text = fc.string({ unit, maxLength: 12 });
/** Mostly short; sometimes thousands of units, so a few variables cross a chunk. */
const longText = fc
  .tuple(fc.string({ unit, minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 3000 }))
  .map(([piece, times]) => piece.repeat(times));
const value: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: text, weight: 10 },
  { arbitrary: longText, weight: 2 },
  { arbitrary: text.map((s) => Buffer.from(s, "utf8")), weight: 2 },
  { arbitrary: fc.constantFrom(undefined, 7, null), weight: 1 },
);
const pairs = fc.array(fc.tuple(text, value), { maxLength: 40 });

/** The list without the variables that fail on their own: a valid environment. */
const validOnly = (list: [string, unknown][]) =>
  list.filter(([name, v]) => {
    try {
      if (v !== undefined) {
        assertEnvName(name, WHERE);
        assertEnvValue(name, v, WHERE);
      }
      return true;
    } catch {
      return false;
    }
  });

/** The oracle: the first variable that fails on its own, or the envp each variable encodes to. */
function oracle(
  list: Iterable<[string, unknown]>,
  skipUndefined = true,
): { error: string } | { envp: Buffer } {
  const parts: Buffer[] = [];
  for (const [name, v] of list) {
    if (v === undefined && skipUndefined) continue;
    try {
      assertEnvName(name, WHERE);
      assertEnvValue(name, v, WHERE);
    } catch (error) {
      return { error: (error as Error).message };
    }
    const bytes = typeof v === "string" ? Buffer.from(v, "utf8") : (v as Buffer);
    parts.push(Buffer.from(`${name}=`, "utf8"), bytes, Buffer.from([0]));
  }
  return { envp: Buffer.concat(parts) };
}

function actual(env: Parameters<typeof envEntries>[0]): { error: string } | { envp: Buffer } {
  try {
    return { envp: Buffer.from(packedEnvp(envEntries(env, WHERE)).bytes) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** A record of the list, last value of a repeated name winning in its first place (as a record does). */
function recordOf(list: [string, unknown][]): Record<string, EnvValue | undefined> {
  const record: Record<string, EnvValue | undefined> = {};
  for (const [name, v] of list) {
    Object.defineProperty(record, name, {
      value: v,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return record;
}

describe("envEntries + packedEnvp against a per-variable oracle", () => {
  it("a record: the same envp, or the same error naming the same variable", () => {
    fc.assert(
      fc.property(pairs, fc.boolean(), (list, onlyValid) => {
        const record = recordOf(onlyValid ? validOnly(list) : list);
        const entries = Object.keys(record).map((name): [string, unknown] => [name, record[name]]);
        expect(actual(record)).toEqual(oracle(entries));
      }),
      { numRuns: 400 },
    );
  });

  it("a Map: the same envp, or the same error", () => {
    fc.assert(
      fc.property(pairs, fc.boolean(), (list, onlyValid) => {
        const map = new Map(onlyValid ? validOnly(list) : list);
        // A Map holding undefined is invalid (only records skip it).
        expect(actual(map as Map<string, EnvValue>)).toEqual(oracle(map, false));
      }),
      { numRuns: 300 },
    );
  });

  it("an array of NAME=value strings and Buffers: the same envp, duplicates kept", () => {
    fc.assert(
      fc.property(pairs, fc.boolean(), (list, asBuffers) => {
        const valid = validOnly(list).filter(([, v]) => v !== undefined) as [string, EnvValue][];
        const array = valid.map(([name, v]) => {
          const pair = Buffer.concat([Buffer.from(`${name}=`), Buffer.from(v)]);
          return asBuffers || typeof v !== "string" ? pair : `${name}=${v}`;
        });
        expect(actual(array)).toEqual(oracle(valid));
      }),
      { numRuns: 300 },
    );
  });
});
