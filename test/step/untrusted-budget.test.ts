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
    const runtime = createRuntime({ parentEnv, ...options, logger: pino({ level: "silent" }) });
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
    const runtime = createRuntime({ parentEnv, logger: pino({ level: "silent" }) });
    const plan = runtime.planBash("true", { context });
    const skipped = plan.variables.filter((v) => v.reason === "aggregate_env_budget");
    expect(skipped.every((v) => v.fate === "skipped" && v.origin === "context")).toBe(true);
    expect(plan.variables.filter((v) => v.fate === "trimmed")).toEqual([]);
    expect(plan.footprint).toBeLessThanOrEqual(probeLimits().execLimit);
    if (count === 20) expect(skipped.length).toBeGreaterThan(0);
  });

  it("runtime.spawn keeps the trusted variables and reports the skips", async () => {
    const runtime = createRuntime({ parentEnv, logger: pino({ level: "silent" }) });
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
  const runtime = createRuntime({ parentEnv: heavy, logger: pino({ level: "silent" }) });
  const plan = runtime.planBash("true", { context: { small: "s" } });
  expect(plan.variables.some((v) => v.fate === "trimmed")).toBe(true);
  // Trimming is sized to the trusted variables' own overflow; the small context entry still fits.
  expect(plan.bounded.skipped).toEqual([]);
  expect(plan.layered.env.has("CTX_SMALL")).toBe(true);
  expect(plan.bounded.env.has("CTX_SMALL")).toBe(true);
});
