/**
 * Untrusted input never evicts (issue 21, finding 7), as a property of the
 * whole bash-step planner: for any context and step values (empty, null,
 * long names, large values, many keys), the trusted variables the child
 * would receive are exactly those it receives with no untrusted input at all
 * — same names, same values — and a step the trusted variables alone fit is
 * never refused. The plan's footprint is checked with execFits on the exact
 * environment and argv the step would run with.
 *
 * Broken once on purpose: with bash-step passing only the context names as
 * untrusted (the old behaviour), fast-check shrank to a few null and empty
 * step values beside a near-full trusted environment (a trusted variable
 * trimmed); with boundedEnv judging the trusted side with the full argv
 * (the spill preamble included), to a spilled step value under a 3,000-byte
 * name. Both fallbacks (the script through a descriptor, then no spill at
 * all) are reached within the 300 runs. Restored, green.
 */
import fc from "fast-check";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { EnvBudgetError } from "../../src/errors.js";
import { execFits } from "../../src/limits.js";
import { createRuntime } from "../../src/runtime.js";
import type { BashStepPlan } from "../../src/step/bash-step.js";

const silent = pino({ level: "silent" });
const TRUSTED_LAYERS = new Set([
  "inherited",
  "session",
  "overlay",
  "extra",
  "host",
  "grant",
  "correlation",
]);

const key = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9_]{0,12}$/),
  fc.integer({ min: 1, max: 3_000 }).map((n) => `k${"n".repeat(n)}`),
);
const value = fc.oneof(
  fc.constant(""),
  fc.constant(null),
  fc.integer({ min: 0, max: 6_000 }).map((n) => "v".repeat(n)),
);

function trustedOf(plan: BashStepPlan): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, v] of plan.bounded.env) {
    if (TRUSTED_LAYERS.has(plan.layered.origin.get(name) ?? "inherited")) out.set(name, v);
  }
  return out;
}

describe("bash step planning: untrusted input never changes the trusted set (property)", () => {
  it("the trusted variables are those of the step without untrusted input", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 4_000 }), { maxLength: 24 }),
        fc.integer({ min: 0, max: 3_000 }),
        fc.dictionary(key, value, { maxKeys: 60 }),
        fc.dictionary(key, value, { maxKeys: 30 }),
        fc.integer({ min: 8_000, max: 90_000 }),
        (inheritedSizes, hostBytes, values, context, execLimit) => {
          const parentEnv: Record<string, string> = { PATH: "/usr/bin:/bin" };
          inheritedSizes.forEach((n, i) => {
            parentEnv[`HOST_VAR_${i}`] = "h".repeat(n);
          });
          const runtime = createRuntime({
            parentEnv,
            hostEnv: { HOST_OWNED: "o".repeat(hostBytes) },
            logger: silent,
          });
          const limits = { execLimit, maxArgStrlen: 131_072 };
          let alone: BashStepPlan;
          try {
            alone = runtime.planBash("echo hi", { limits });
          } catch (error) {
            expect(error).toBeInstanceOf(EnvBudgetError);
            // The trusted side alone does not fit: the same refusal with untrusted input.
            expect(() => runtime.planBash("echo hi", { limits, values, context })).toThrow(
              EnvBudgetError,
            );
            return;
          }
          const plan = runtime.planBash("echo hi", { limits, values, context });
          expect(trustedOf(plan)).toEqual(trustedOf(alone));
          expect(plan.bounded.dropped).toEqual(alone.bounded.dropped);
          expect(plan.footprint).toBeLessThanOrEqual(execLimit);
          // Every untrusted variable of the plan reached the env, a spill, or a reported skip.
          const skipped = new Set(plan.bounded.skipped.map((s) => s.name));
          const spilled = new Set(plan.spill.spilled.map((s) => s.name));
          for (const [name, layer] of plan.layered.origin) {
            if (TRUSTED_LAYERS.has(layer)) continue;
            const reached = plan.bounded.env.has(name) || spilled.has(name);
            expect(reached || skipped.has(name), name).toBe(true);
            expect(reached && skipped.has(name), name).toBe(false);
          }
          const env = Object.fromEntries(plan.bounded.env);
          const argvBytes = plan.spill.argv.bytes;
          // execFits on a stand-in argv of the planned size (argc strings, same total).
          const argv = Array.from({ length: plan.spill.argv.argc }, (_, i) =>
            i === 0 ? "x".repeat(argvBytes - plan.spill.argv.argc) : "",
          );
          expect(execFits(plan.interpreter, argv, env, limits).fits).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});
