/**
 * The bound on untrusted keys (issue 21, finding 9): 120,000 tiny context
 * keys fit the exec budget but bash then takes minutes to start, and a
 * million keys kept the event loop busy for seconds while planning. A
 * runtime exports at most maxUntrustedKeys untrusted variables (default
 * 4096; step values first, then context in name order), skips the rest with
 * "too_many_keys", and refuses input with more than 4 times as many keys
 * with TooManyKeysError before any per-key work.
 *
 * Seen red on the old code: maxUntrustedKeys was an unknown option
 * (TypeError), 5,000 context keys were all exported, and the Proxy below
 * had its descriptors read for each of its keys. Broken once on purpose
 * (assertUntrustedKeyCount a no-op): the Proxy and Map tests went red; with
 * the flattening bound in assertTree off, the nested test went red.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_UNTRUSTED_KEYS } from "../../src/env/untrusted-keys.js";
import { TooManyKeysError } from "../../src/errors.js";
import { createRuntime } from "../../src/runtime.js";

const silent = pino({ level: "silent" });
const parentEnv = { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HTTPS_PROXY: "http://p:1" };

function keys(count: number, prefix = "k"): Record<string, string> {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, "v"]));
}

describe("maxUntrustedKeys", () => {
  it("defaults to 4096 and is validated", () => {
    expect(DEFAULT_MAX_UNTRUSTED_KEYS).toBe(4096);
    expect(createRuntime({ parentEnv, logger: silent }).config.maxUntrustedKeys).toBe(4096);
    for (const bad of [0, -1, 1.5, "10", Number.NaN]) {
      expect(() => createRuntime({ maxUntrustedKeys: bad as number })).toThrow(
        /maxUntrustedKeys must be a positive integer/,
      );
    }
  });

  it("5,000 context keys: 4,096 reach the child, the rest are reported skipped", async () => {
    const runtime = createRuntime({ parentEnv, logger: silent });
    const context = keys(5_000);
    const result = await runtime.bash("env | grep -c '^CTX_K'", { context });
    expect(Number(result.output)).toBe(4_096);
    const tooMany = result.skipped.filter((s) => s.reason === "too_many_keys");
    expect(tooMany).toHaveLength(904);
    // Name order: the first 4,096 names are kept.
    const names = Object.keys(context)
      .map((k) => `CTX_${k.toUpperCase()}`)
      .sort();
    expect(tooMany.map((s) => s.name)).toEqual(names.slice(4_096));
  });

  it("step values are kept before context entries", () => {
    const runtime = createRuntime({ parentEnv, logger: silent, maxUntrustedKeys: 10 });
    const plan = runtime.planBash("true", { values: keys(8, "v"), context: keys(5, "c") });
    const step = [...plan.layered.origin].filter(([, layer]) => layer === "step");
    const context = [...plan.layered.origin].filter(([, layer]) => layer === "context");
    expect(step).toHaveLength(8);
    expect(context.map(([name]) => name)).toEqual(["CTX_C0", "CTX_C1"]);
    const skipped = plan.variables.filter((v) => v.reason === "too_many_keys").map((v) => v.name);
    expect(skipped).toEqual(["CTX_C2", "CTX_C3", "CTX_C4"]);
  });

  it("runtime.spawn and buildEnv apply the same bound", async () => {
    const runtime = createRuntime({ parentEnv, logger: silent, maxUntrustedKeys: 3 });
    const built = runtime.buildEnv({ context: keys(5) });
    expect([...built.env.keys()].filter((n) => n.startsWith("CTX_"))).toHaveLength(3);
    expect(built.skipped.filter((s) => s.reason === "too_many_keys")).toHaveLength(2);
    const result = await runtime.spawn("sh", ["-c", "env | grep -c '^CTX_K'"], {
      context: keys(5),
    });
    expect(String(result.stdout).trim()).toBe("3");
  });

  it("far beyond the bound: TooManyKeysError before any key is read", () => {
    const runtime = createRuntime({ parentEnv, logger: silent, maxUntrustedKeys: 100 });
    let reads = 0;
    const names = Array.from({ length: 100_000 }, (_, i) => `k${i}`);
    const hostile = new Proxy(
      {},
      {
        ownKeys: () => names,
        getOwnPropertyDescriptor: () => {
          reads += 1;
          return { value: "v", enumerable: true, configurable: true, writable: true };
        },
      },
    );
    for (const options of [{ context: hostile }, { values: hostile }]) {
      reads = 0;
      let caught: unknown;
      try {
        runtime.planBash("true", options);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(TooManyKeysError);
      expect(caught).toMatchObject({
        code: "ERR_EXACTSPAWN_TOO_MANY_KEYS",
        maxUntrustedKeys: 100,
        limit: 400,
      });
      // Counting the keys (Object.keys) reads each one's enumerability once; nothing more is read.
      expect(reads).toBeLessThanOrEqual(names.length);
    }
  });

  it("a 100,000-key Map is refused at once, and so is a context plus values over 4x", () => {
    const runtime = createRuntime({ parentEnv, logger: silent });
    const big = new Map(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, "v"] as const));
    expect(() => runtime.planBash("true", { context: big })).toThrow(TooManyKeysError);
    expect(() => runtime.planBash("true", { values: big })).toThrow(TooManyKeysError);
    expect(() => runtime.buildEnv({ context: big })).toThrow(TooManyKeysError);
    expect(() => runtime.planBash("true", { context: keys(9_000), values: keys(8_000) })).toThrow(
      TooManyKeysError,
    );
  });

  it("nested step values that would flatten into too many variables are refused before encoding", () => {
    const runtime = createRuntime({ parentEnv, logger: silent, maxUntrustedKeys: 100 });
    let encoded = 0;
    const inner = keys(1_000);
    const values = {
      a: {
        ...inner,
        toJSON() {
          encoded += 1;
          return "x";
        },
      },
    };
    expect(() => runtime.planBash("true", { values })).toThrow(TooManyKeysError);
    expect(encoded).toBe(0);
    // Arrays are never flattened: a long array is one variable (its JSON text).
    const plan = runtime.planBash("true", {
      values: { list: Array.from({ length: 1_000 }, () => 1) },
    });
    expect(plan.layered.env.has("RECIPE_VAR_list")).toBe(true);
  });
});
