/**
 * Properties of boundedEnv's trust order (issue 10, item 4): trusted
 * variables are dropped only while the trusted ones alone do not fit (never
 * for untrusted bytes), untrusted entries are skipped only while the whole
 * does not fit, and the reported footprint is exact (checked with execFits, the exact kernel model,
 * on the returned environment).
 *
 * Broken once on purpose: with phase 1 judging the whole environment instead
 * of the trusted variables alone (the old trimming), and separately with the
 * skipped bytes not subtracted from the running total, this property failed
 * with a shrunk counterexample. Restored, green.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { boundedEnv } from "../../src/env/bounded-env.js";
import { EnvBudgetError } from "../../src/errors.js";
import { execFits } from "../../src/limits.js";
import { captureLog } from "../helpers/capture-log.js";

const FILE = "/bin/bash";
const ARGV = ["bash", "-c", "true"];
const NONE = { names: [], prefixes: [] };

type Origin = "inherited" | "context" | "host";
const entry = fc.record({
  origin: fc.constantFrom<Origin>("inherited", "context", "host"),
  bytes: fc.integer({ min: 0, max: 3000 }),
});

describe("boundedEnv: trust order (property)", () => {
  it("skips untrusted first, drops trusted only for trusted pressure, and is exact", () => {
    fc.assert(
      fc.property(
        fc.array(entry, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 2_000, max: 60_000 }),
        (entries, execLimit) => {
          const env = new Map<string, string>();
          const inherited = new Set<string>();
          const untrusted = new Set<string>();
          entries.forEach(({ origin, bytes }, i) => {
            const name = `${origin.toUpperCase()}_${i}`;
            env.set(name, "v".repeat(bytes));
            if (origin === "inherited") inherited.add(name);
            if (origin === "context") untrusted.add(name);
          });
          const limits = { execLimit, maxArgStrlen: 131_072 };
          const input = {
            env,
            inheritedNames: inherited,
            untrustedNames: untrusted,
            protected: NONE,
            file: FILE,
            argv: ARGV,
            limits,
            log: captureLog().logger,
          };
          const trustedOnly = new Map([...env].filter(([name]) => !untrusted.has(name)));
          const trustedFit = execFits(FILE, ARGV, Object.fromEntries(trustedOnly), limits).fits;
          let result: ReturnType<typeof boundedEnv>;
          try {
            result = boundedEnv(input);
          } catch (error) {
            // Only when even the undroppable trusted variables cannot fit.
            expect(error).toBeInstanceOf(EnvBudgetError);
            expect(trustedFit).toBe(false);
            const fixed = new Map(
              [...env].filter(([name]) => !untrusted.has(name) && !inherited.has(name)),
            );
            expect(execFits(FILE, ARGV, Object.fromEntries(fixed), limits).fits).toBe(false);
            return;
          }
          const fit = execFits(FILE, ARGV, Object.fromEntries(result.env), limits);
          expect(fit.fits).toBe(true);
          expect(result.footprint).toBe(fit.footprint);
          for (const s of result.skipped) expect(untrusted.has(s.name)).toBe(true);
          for (const d of result.dropped) expect(inherited.has(d.name)).toBe(true);
          // A trusted variable is dropped only if the trusted variables alone did not fit,
          // and no more than they need: with the last one back, they would not fit.
          if (trustedFit) expect(result.dropped).toEqual([]);
          const kept = (names: Iterable<string>) =>
            Object.fromEntries([...names].map((name) => [name, env.get(name)!]));
          const trustedKept = [...result.env.keys()].filter((name) => !untrusted.has(name));
          const lastDrop = result.dropped.at(-1);
          if (lastDrop !== undefined) {
            const back = kept([...trustedKept, lastDrop.name]);
            expect(execFits(FILE, ARGV, back, limits).fits).toBe(false);
          }
          // An untrusted entry is skipped only while the whole does not fit.
          const lastSkip = result.skipped.at(-1);
          if (lastSkip !== undefined) {
            const back = kept([...result.env.keys(), lastSkip.name]);
            expect(execFits(FILE, ARGV, back, limits).fits).toBe(false);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
