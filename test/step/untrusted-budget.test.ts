/**
 * Untrusted bytes never evict trusted ones (issue 10, item 4), against the
 * real kernel: a parent environment with HTTPS_PROXY, NO_PROXY,
 * SSL_CERT_FILE and GIT_CONFIG_GLOBAL, and a context of 16 or 20 values of
 * 126,000 bytes. The step must run, the real child (/proc/$$/environ) must
 * still hold the four trusted variables, and every context entry that did not
 * reach the child must be reported skipped with "aggregate_env_budget".
 *
 * Broken once on purpose: with bash-step passing no untrustedNames to
 * boundedEnv (the old behaviour), the 16-value case ran with the host's
 * inherited HOST_BLOB_* variables trimmed to make room for the context, and
 * the 20-value case threw EnvBudgetError before starting; with runtime-spawn
 * passing none, both of its runtime.spawn tests went red. Restored, green.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import { probeLimits } from "../../src/limits.js";
import { createRuntime } from "../../src/runtime.js";

const TRUSTED = {
  HTTPS_PROXY: "http://proxy.internal:3128",
  NO_PROXY: "localhost,.internal",
  SSL_CERT_FILE: "/etc/ssl/certs/ca-certificates.crt",
  GIT_CONFIG_GLOBAL: "/etc/exactspawn-test-gitconfig",
};
// The parent environment a host might have: PATH, the four above, and a few
// hundred KiB of ordinary inherited variables (trimmable if trusted pressure needs it).
const parentEnv: Record<string, string> = {
  PATH: process.env["PATH"] ?? "/usr/bin:/bin",
  ...TRUSTED,
};
for (let i = 0; i < 3; i++) parentEnv[`HOST_BLOB_${i}`] = "h".repeat(60_000);

function contextOf(count: number): Record<string, string> {
  return Object.fromEntries(
    Array.from({ length: count }, (_, i) => [
      `blob_${String(i).padStart(2, "0")}`,
      `${i}`.padEnd(126_000, "c"),
    ]),
  );
}

function environOf(stdout: unknown): Map<string, string> {
  const env = new Map<string, string>();
  for (const entry of String(stdout).split("\0")) {
    if (entry === "") continue;
    const at = entry.indexOf("=");
    env.set(entry.slice(0, at), entry.slice(at + 1));
  }
  return env;
}

describe.each([16, 20])("a context of %i values × 126,000 bytes", (count) => {
  const context = contextOf(count);

  it.each([
    ["the default runtime", {}],
    ["the recipe-runner-compat preset", { preset: "recipe-runner-compat" as const }],
  ])("%s: the step runs and keeps every trusted variable", async (_label, options) => {
    const runtime = createRuntime({
      inherit: "all",
      parentEnv,
      ...options,
      logger: pino({ level: "silent" }),
    });
    const result = await runtime.bash("cat /proc/$$/environ", { context });
    expect(result.exitCode).toBe(0);
    const env = environOf(result.stdout);
    for (const [name, value] of Object.entries(TRUSTED)) expect(env.get(name), name).toBe(value);
    // Trusted inherited variables were not trimmed for untrusted pressure.
    expect(result.dropped).toEqual([]);
    for (let i = 0; i < 3; i++) expect(env.has(`HOST_BLOB_${i}`)).toBe(true);
    // Every context entry either reached the child intact or is reported skipped for the budget.
    const budgetSkips = result.skipped
      .filter((s) => s.reason === "aggregate_env_budget")
      .map((s) => s.name);
    for (const [key, value] of Object.entries(context)) {
      const name = !("preset" in options) ? `CTX_${key.toUpperCase()}` : key.toUpperCase();
      if (env.has(name)) expect(env.get(name)).toBe(value);
      else expect(budgetSkips, name).toContain(name);
    }
    if (count === 20) expect(budgetSkips.length).toBeGreaterThan(0);
    // Largest first, ties by name: equal sizes here, so skips are in name order.
    expect([...budgetSkips].sort()).toEqual(budgetSkips);
  });

  it("explain's plan names the skipped entries and trims nothing", () => {
    const runtime = createRuntime({ inherit: "all", parentEnv, logger: pino({ level: "silent" }) });
    const plan = runtime.planBash("true", { context });
    const skipped = plan.variables.filter((v) => v.reason === "aggregate_env_budget");
    expect(skipped.every((v) => v.fate === "skipped" && v.origin === "context")).toBe(true);
    expect(plan.variables.filter((v) => v.fate === "trimmed")).toEqual([]);
    expect(plan.footprint).toBeLessThanOrEqual(probeLimits().execLimit);
    if (count === 20) expect(skipped.length).toBeGreaterThan(0);
  });

  it("runtime.spawn keeps the trusted variables and reports the skips", async () => {
    const runtime = createRuntime({ inherit: "all", parentEnv, logger: pino({ level: "silent" }) });
    const skips: string[] = [];
    const trims: string[] = [];
    const result = await runtime.spawn("cat", ["/proc/self/environ"], {
      context,
      onSkip: (skipped) => skips.push(...skipped.map((s) => s.name)),
      onTrim: (dropped) => trims.push(...dropped.map((d) => d.name)),
    });
    const env = environOf(result.stdout);
    for (const [name, value] of Object.entries(TRUSTED)) expect(env.get(name), name).toBe(value);
    expect(trims).toEqual([]);
    if (count === 20) expect(skips.length).toBeGreaterThan(0);
    for (const name of skips) expect(env.has(name)).toBe(false);
  });
});

it("trusted pressure alone still trims inherited variables (and only then)", () => {
  const heavy: Record<string, string> = { PATH: parentEnv["PATH"]!, ...TRUSTED };
  for (let i = 0; i < 40; i++) heavy[`HOST_BIG_${i}`] = "t".repeat(100_000);
  const runtime = createRuntime({
    inherit: "all",
    parentEnv: heavy,
    logger: pino({ level: "silent" }),
  });
  const plan = runtime.planBash("true", { context: { small: "s" } });
  expect(plan.variables.some((v) => v.fate === "trimmed")).toBe(true);
  // Trimming is sized to the trusted variables' own overflow; the small context entry still fits.
  expect(plan.bounded.skipped).toEqual([]);
  expect(plan.layered.env.has("CTX_SMALL")).toBe(true);
  expect(plan.bounded.env.has("CTX_SMALL")).toBe(true);
});

/**
 * Issue 21, finding 7: empty and null step values are never spilled, and the
 * trimming counted them as trusted. 2,062 empty values under a 256 KiB limit
 * dropped HTTPS_PROXY, SSL_CERT_FILE, GIT_CONFIG_GLOBAL and NO_PROXY; 20
 * empty values under 120 KB names (or many null values) stopped the step
 * with EnvBudgetError. Every untrusted entry is charged to the untrusted
 * side: it is skipped ("aggregate_env_budget"), never a trusted variable.
 */
describe("empty and null step values are charged to the untrusted side", () => {
  const limits = { execLimit: 256 * 1024, maxArgStrlen: 131_072 };
  // About 240 KB of trusted variables: the untrusted entries below do not fit beside them.
  const heavier = { ...parentEnv, HOST_BLOB_3: "h".repeat(60_000) };
  const emptyValues = (count: number, value: string | null, pad = 5): Record<string, unknown> =>
    Object.fromEntries(
      Array.from({ length: count }, (_, i) => [`k${String(i).padStart(pad, "0")}`, value]),
    );

  it.each([
    ["2,062 empty values", emptyValues(2_062, "")],
    ["3,000 null values", emptyValues(3_000, null)],
    ["20 empty values under 120 KB names", emptyValues(20, "", 120_000)],
  ])("%s: the child keeps every trusted variable", async (_label, values) => {
    const runtime = createRuntime({
      inherit: "all",
      parentEnv: heavier,
      logger: pino({ level: "silent" }),
    });
    const result = await runtime.bash("cat /proc/$$/environ", { values, limits });
    expect(result.exitCode).toBe(0);
    const env = environOf(result.stdout);
    for (const [name, value] of Object.entries(TRUSTED)) expect(env.get(name), name).toBe(value);
    for (let i = 0; i < 4; i++) expect(env.has(`HOST_BLOB_${i}`)).toBe(true);
    expect(result.dropped).toEqual([]);
    const budgetSkips = result.skipped.filter((s) => s.reason === "aggregate_env_budget");
    expect(budgetSkips.length).toBeGreaterThan(0);
    for (const { name } of budgetSkips) expect(env.has(name), name).toBe(false);
  });

  it("the preamble of spilled values is charged to them: the script goes through a descriptor", async () => {
    // 700 values of 600 bytes under 50-byte keys all spill: about 62 KB of preamble lines,
    // inline by the 64 KiB rule, that do not fit beside the trusted variables.
    const keys = Array.from({ length: 700 }, (_, i) => `v${i}`.padEnd(50, "_"));
    const values = Object.fromEntries(keys.map((k, i) => [k, `${i}`.padEnd(600, "x")]));
    const runtime = createRuntime({
      inherit: "all",
      parentEnv: heavier,
      logger: pino({ level: "silent" }),
    });
    const plan = runtime.planBash("true", { values, limits });
    expect(plan.variables.filter((v) => v.fate === "trimmed")).toEqual([]);
    expect(plan.scriptMode).toBe("file");
    expect(plan.footprint).toBeLessThanOrEqual(limits.execLimit);
    const last = `RECIPE_VAR_${keys[699]}`;
    const result = await runtime.bash(`cat /proc/$$/environ >&2; printf '%s' "$${last}"`, {
      values,
      limits,
    });
    expect(result.exitCode).toBe(0);
    expect(result.scriptMode).toBe("file");
    expect(result.stdout).toBe(values[keys[699]!]);
    const env = environOf(result.stderr);
    for (const [name, value] of Object.entries(TRUSTED)) expect(env.get(name), name).toBe(value);
    for (let i = 0; i < 4; i++) expect(env.has(`HOST_BLOB_${i}`)).toBe(true);
  });

  it("when not even the loader fits, nothing spills and the spilled values are skipped", async () => {
    // Trusted variables leave fewer bytes than the script loader needs beside them.
    const alone = createRuntime({
      inherit: "all",
      parentEnv: heavier,
      logger: pino({ level: "silent" }),
    });
    const trustedFootprint = alone.planBash("true", { limits }).footprint;
    const tight = { execLimit: trustedFootprint + 20, maxArgStrlen: 131_072 };
    const values = { big: "b".repeat(5_000), empty: "" };
    const plan = alone.planBash("true", { values, limits: tight });
    expect(plan.spill.spilled).toEqual([]);
    expect(plan.scriptMode).toBe("inline");
    expect(plan.bounded.dropped).toEqual([]);
    const skipped = plan.variables.filter((v) => v.fate === "skipped").map((v) => v.name);
    expect(skipped).toEqual(["RECIPE_VAR_big", "RECIPE_VAR_empty"]);
    const result = await alone.bash("cat /proc/$$/environ", { values, limits: tight });
    expect(result.exitCode).toBe(0);
    expect(result.skipped).toEqual([
      { name: "RECIPE_VAR_big", reason: "aggregate_env_budget" },
      { name: "RECIPE_VAR_empty", reason: "aggregate_env_budget" },
    ]);
    const env = environOf(result.stdout);
    for (const [name, value] of Object.entries(TRUSTED)) expect(env.get(name), name).toBe(value);
    expect(env.has("RECIPE_VAR_big")).toBe(false);
  });
});
