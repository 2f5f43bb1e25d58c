import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { boundedEnv } from "../../src/env/bounded-env.js";
import { defaultProtectedNames, isProtectedName, isSpillableName } from "../../src/env/names.js";
import { planSpill } from "../../src/env/spill-plan.js";
import { EnvBudgetError, SpillError } from "../../src/errors.js";
import { envPairBytes, execFits } from "../../src/limits.js";
import { bashArgvSizer, bashInvocation } from "../../src/step/bash-script.js";
import { spillReads } from "../../src/step/preamble.js";
import { captureLog } from "../helpers/capture-log.js";

const BASH = "/bin/bash";
const NAMES = [
  "PATH",
  "HOME",
  "LANG",
  "TERM",
  "FOO",
  "BAR_BAZ",
  "EXACTSPAWN_X",
  "RECIPE_VAR_a",
  "RECIPE_VAR_b",
  "RECIPE_VAR_c",
  "RECIPE_VAR_d__e",
  "A",
  "B",
  "C",
  "BASH_ENV",
  "my-var",
  "x1",
];
const PROTECTED = defaultProtectedNames();

type Origin = "inherited" | "step" | "other";
interface Scenario {
  entries: { name: string; value: string; origin: Origin }[];
  execLimit: number;
  cap: number;
  command: string;
}

const value = fc
  .record({ ch: fc.constantFrom("a", "é", "'", "\n", "$"), n: fc.nat({ max: 3000 }) })
  .map(({ ch, n }) => ch.repeat(n));

const scenario: fc.Arbitrary<Scenario> = fc.record({
  entries: fc.uniqueArray(
    fc.record({
      name: fc.constantFrom(...NAMES),
      value,
      origin: fc.constantFrom<Origin>("inherited", "step", "other"),
    }),
    { selector: (e) => e.name, maxLength: NAMES.length },
  ),
  execLimit: fc.integer({ min: 200, max: 120_000 }),
  cap: fc.integer({ min: 20, max: 4000 }),
  command: fc.constantFrom("echo hi", `: ${"c".repeat(65_400)}`),
});

const LIMIT_STR = 131_072;

function setup(s: Scenario) {
  const env = new Map(s.entries.map((e) => [e.name, e.value]));
  const stepNames = new Set(s.entries.filter((e) => e.origin === "step").map((e) => e.name));
  const inheritedNames = new Set(
    s.entries.filter((e) => e.origin === "inherited").map((e) => e.name),
  );
  const limits = { execLimit: s.execLimit, maxArgStrlen: LIMIT_STR };
  const run = () =>
    planSpill({
      env,
      stepNames,
      file: BASH,
      argvBytes: bashArgvSizer({
        bash: BASH,
        command: s.command,
        value: (n: string) => env.get(n) ?? "",
      }),
      limits,
      perValueCap: s.cap,
      log: captureLog().logger,
    });
  return { env, stepNames, inheritedNames, limits, run };
}

/** The argv a bash step would really get for these spilled names (descriptors from fd 3). */
function realArgv(
  spilled: readonly string[],
  command: string,
  env: ReadonlyMap<string, string>,
): readonly string[] {
  const spills = spillReads(spilled, (name) => env.get(name) ?? "");
  return bashInvocation({ bash: BASH, spills, command }).argv;
}

describe("planSpill and boundedEnv properties", () => {
  it("are deterministic, spill only step values, and measure exactly", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const { env, stepNames, limits, run } = setup(s);
        const plan = run();
        const again = run();
        expect([...again.inline]).toEqual([...plan.inline]);
        expect(again.spilled).toEqual(plan.spilled);
        expect(again.dropped).toEqual(plan.dropped);
        expect(again.footprint).toBe(plan.footprint);
        for (const { name } of [...plan.spilled, ...plan.dropped]) {
          expect(stepNames.has(name)).toBe(true);
          expect(env.get(name)).not.toBe("");
        }
        for (const { name } of plan.spilled) expect(isSpillableName(name)).toBe(true);
        for (const { name } of plan.dropped) expect(isSpillableName(name)).toBe(false);
        const argv = realArgv(
          plan.spilled.map((x) => x.name),
          s.command,
          env,
        );
        const verdict = execFits(BASH, argv, plan.inline, limits);
        expect(plan.footprint).toBe(verdict.footprint);
        expect(plan.fits).toBe(verdict.fits);
        if (plan.spilled.length === 0 && plan.dropped.length === 0) {
          expect([...plan.inline]).toEqual([...env]);
        }
        expect([...plan.sizes]).toEqual([...env].map(([n, v]) => [n, envPairBytes(n, v)]));
      }),
      { numRuns: 300 },
    );
  });

  it("fit whenever spilling every step value and dropping every droppable variable would", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const { env, stepNames, inheritedNames, limits, run } = setup(s);
        // The most the two stages together may remove.
        const spillable = [...stepNames].filter((n) => env.get(n) !== "" && isSpillableName(n));
        const overCapUnspillable = [...stepNames].filter(
          (n) => !isSpillableName(n) && Buffer.byteLength(`${n}=${env.get(n)}`) + 1 > s.cap,
        );
        const droppable = [...inheritedNames].filter((n) => !isProtectedName(n, PROTECTED));
        const gone = new Set([...spillable, ...overCapUnspillable, ...droppable]);
        const best = execFits(
          BASH,
          realArgv(spillable, s.command, env),
          [...env].filter(([n]) => !gone.has(n)).map(([n, v]) => `${n}=${v}`),
          limits,
        );

        const plan = run();
        let outcome: "fits" | "budget-error";
        try {
          const input = {
            env: plan.inline,
            inheritedNames,
            protected: PROTECTED,
            file: BASH,
            argv: plan.argv,
            limits,
            log: captureLog().logger,
          };
          const bounded = boundedEnv({ ...input, sizes: plan.sizes });
          // The sizes the plan measured change nothing but the work done.
          const measured = boundedEnv(input);
          expect([...bounded.env]).toEqual([...measured.env]);
          expect(bounded.dropped).toEqual(measured.dropped);
          expect(bounded.footprint).toBe(measured.footprint);
          const argv = realArgv(
            plan.spilled.map((x) => x.name),
            s.command,
            env,
          );
          const verdict = execFits(BASH, argv, bounded.env, limits);
          expect(verdict.fits).toBe(true);
          expect(bounded.footprint).toBe(verdict.footprint);
          for (const { name } of bounded.dropped) {
            expect(inheritedNames.has(name)).toBe(true);
            expect(isProtectedName(name, PROTECTED)).toBe(false);
          }
          outcome = "fits";
        } catch (error) {
          expect(error).toBeInstanceOf(EnvBudgetError);
          outcome = "budget-error";
        }
        if (best.fits) expect(outcome).toBe("fits");
      }),
      { numRuns: 300 },
    );
  });

  it("reject a NUL value only when it has to spill, by name and length", () => {
    fc.assert(
      fc.property(scenario, fc.nat({ max: 3000 }), (s, n) => {
        const withNul: Scenario = {
          ...s,
          entries: [
            ...s.entries.filter((e) => e.name !== "RECIPE_VAR_a"),
            { name: "RECIPE_VAR_a", value: `SENTINEL\0${"n".repeat(n)}`, origin: "step" },
          ],
        };
        const { run } = setup(withNul);
        try {
          const plan = run();
          expect(plan.spilled.map((x) => x.name)).not.toContain("RECIPE_VAR_a");
        } catch (error) {
          expect(error).toBeInstanceOf(SpillError);
          expect((error as SpillError).variable).toBe("RECIPE_VAR_a");
          expect((error as SpillError).bytes).toBe(n + 9);
          expect((error as Error).message).not.toContain("SENTINEL");
        }
      }),
      { numRuns: 200 },
    );
  });
});
