/**
 * Issue 29 item 6: beyond maxUntrustedKeys, keys the host declared are never
 * displaced by undeclared ones (before: kept in name order, so
 * `task_description` was skipped as too_many_keys behind 5,000 `key_*`).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createRuntime } from "../../src/runtime.js";
import { captureLog } from "../helpers/capture-log.js";

const parentEnv = { PATH: "/usr/bin:/bin" };

describe("the key cap keeps declared keys", () => {
  it("task_description survives 5,000 key_* keys when the host declared it", () => {
    const runtime = createRuntime({
      parentEnv,
      bareNames: ["TASK_DESCRIPTION"],
      logger: captureLog().logger,
    });
    const context: Record<string, string> = {};
    for (let i = 0; i < 5000; i++) context[`key_${i}`] = "v";
    context["task_description"] = "fix the bug";
    const built = runtime.buildEnv({ context });
    expect(built.env.get("TASK_DESCRIPTION")).toBe("fix the bug");
    expect(built.skipped.filter((s) => s.reason === "too_many_keys")).toHaveLength(5001 - 4096);
    expect(built.skipped.some((s) => s.name === "TASK_DESCRIPTION")).toBe(false);
  });

  it("a declared step-value alias survives undeclared context and step values", () => {
    const runtime = createRuntime({
      parentEnv,
      bareNames: ["ZZ_RESULT"],
      maxUntrustedKeys: 3,
      logger: captureLog().logger,
    });
    const plan = runtime.planBash("true", {
      values: { a: "1", b: "2", zz_result: "3" },
      context: { c: "4", d: "5" },
    });
    expect(plan.layered.env.get("ZZ_RESULT")).toBe("3");
  });

  it("property: every declared key is kept; the count is min(total, max); undeclared fill the rest", () => {
    const key = fc.stringMatching(/^k[0-9a-f]{0,6}$/);
    fc.assert(
      fc.property(
        fc.uniqueArray(key, { minLength: 0, maxLength: 6 }),
        fc.uniqueArray(key, { minLength: 0, maxLength: 40 }),
        fc.integer({ min: 1, max: 12 }),
        (declaredKeys, otherKeys, max) => {
          const declared = declaredKeys.slice(0, max);
          // Within the refusal bound (4 × max keys: TooManyKeysError beyond it).
          const others = otherKeys
            .filter((k) => !declaredKeys.includes(k))
            .slice(0, 4 * max - declared.length);
          const runtime = createRuntime({
            parentEnv,
            bareNames: declared.map((k) => k.toUpperCase()),
            maxUntrustedKeys: max,
            logger: captureLog().logger,
          });
          const context = Object.fromEntries(
            [...others, ...declared].map((k) => [k, `value of ${k}`]),
          );
          const built = runtime.buildEnv({ context });
          for (const k of declared) expect(built.env.get(k.toUpperCase())).toBe(`value of ${k}`);
          const exported = [...built.origin.values()].filter((o) => o === "context").length;
          expect(exported).toBe(Math.min(declared.length + others.length, max));
          const capped = built.skipped.filter((s) => s.reason === "too_many_keys");
          expect(capped.every((s) => s.name.startsWith("CTX_"))).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });
});
