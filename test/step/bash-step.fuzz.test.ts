/**
 * Fuzz: thousands of random bash steps against the real kernel. Random value
 * counts, sizes (up to 10 MiB in a step), contents and names (odd ones
 * included), random exec limits at or below the real one, and a parent
 * environment with large inherited variables. For every step:
 *   - no raw E2BIG (nor any other error: every input here is representable);
 *   - every step variable (RECIPE_VAR_<key> and the alias) is either reported
 *     by name with a reason in result.skipped / result.dropped, or reaches
 *     the script byte-identical: inline, the script prints its whole initial
 *     environment as the kernel delivered it (/proc/$$/environ), which must
 *     equal the planned environment, and
 *     that environment must hold each inline value exactly; spilled, the
 *     script prints the shell variables the preamble set, compared by digest;
 *   - the run spills exactly what the pure plan said, and a spilled name is
 *     never also in the environment.
 *
 * Seeded (FUZZ_SEED overrides); the failure message names the seed and the
 * step index. Under `npm run test:long` the native project runs 2,000 steps
 * and the fallback 300 (the planning is engine-independent, only the spawn
 * differs); `npm test` runs 400 and 25 (a fallback step forks the test
 * worker: 100 took 16 s of a two-core run).
 */
import { createHash } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { PER_VALUE_ENV_CAP, probeLimits } from "../../src/limits.js";
import { createRuntime } from "../../src/runtime.js";
import { byRun } from "../helpers/long.js";
import { leftovers, makeRootFactory } from "../helpers/steps.js";

const NATIVE_STEPS = byRun(400, 2000);
const FALLBACK_STEPS = byRun(25, 300);
const STEPS =
  Number(process.env["FUZZ_STEPS"] ?? 0) ||
  (process.env["EXACTSPAWN_NATIVE"] === "0" ? FALLBACK_STEPS : NATIVE_STEPS);
const SEED = Number(process.env["FUZZ_SEED"] ?? 0x5e17);
const CONCURRENCY = 4;
const KIB = 1024;
const MIB = 1024 * KIB;

const { root, removeRoots } = makeRootFactory();
afterAll(removeRoots);

/** mulberry32: small, fast, good enough for test input. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Keys that exercise the name rules: denylisted and unspillable aliases, odd and invalid names. */
const ODD_KEYS = [
  "",
  "_",
  "a",
  "A",
  "Aa",
  "aA",
  "path",
  "home",
  "ifs",
  "bash_env",
  "bashopts",
  "bash_x",
  "comp_words",
  "random",
  "lineno",
  "funcname",
  "ps4",
  "env",
  "ld_preload",
  "recipe_var_y",
  "exactspawn_x",
  "task_description",
  "a-b",
  "with space",
  "é",
  "1abc",
  "dot.name",
  "a=b",
  "nul\0name",
  "x".repeat(300),
  "a__b",
];

const PIECES = [
  "'",
  '"',
  "$(id)",
  "`id`",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, deliberately not a template
  "${HOME}",
  "*",
  ";",
  "\n",
  " ",
  "\t",
  "\\",
  "é",
  "漢字",
  "🙂",
  "%s",
  "-n",
  "\r",
];

interface StepInput {
  readonly values: Record<string, string>;
  readonly execLimit: number;
}

function makeStep(random: () => number, realLimit: number): StepInput {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const logUniform = (lo: number, hi: number): number =>
    Math.floor(Math.exp(Math.log(lo) + random() * (Math.log(hi) - Math.log(lo))));
  const roll = random();
  // Mostly small steps; some over the cap; a few that approach 10 MiB.
  const total =
    roll < 0.9 ? logUniform(1, 128 * KIB) : roll < 0.997 ? logUniform(128 * KIB, MIB) : 10 * MIB;
  const count = Math.floor(random() * 12);
  const values: Record<string, string> = {};
  const weights = Array.from({ length: count }, () => random() ** 3);
  const sum = weights.reduce((a, b) => a + b, 0) || 1;
  for (let i = 0; i < count; i++) {
    let key: string;
    if (random() < 0.3) key = pick(ODD_KEYS);
    else {
      const length = 1 + Math.floor(random() * 12);
      key = "";
      for (let j = 0; j < length; j++) key += pick([..."abcdefghijklmnopqrstuvwxyz_0123456789"]);
    }
    const size = random() < 0.1 ? 0 : Math.floor((weights[i]! / sum) * total);
    // Near the cap sometimes, to hit the per-name boundary.
    const bytes = random() < 0.05 ? PER_VALUE_ENV_CAP - 20 + Math.floor(random() * 40) : size;
    let value = "";
    while (value.length < bytes) {
      value += random() < 0.2 ? pick(PIECES) : "v".repeat(1 + Math.floor(random() * 4096));
    }
    values[key] = value.slice(0, bytes).replace(/[\uD800-\uDBFF]$/, "x");
  }
  const execLimit = pick([realLimit, realLimit, 1 * MIB, 512 * KIB, 300 * KIB]);
  return { values, execLimit: Math.min(execLimit, realLimit) };
}

/**
 * The script, builtins only (no extra process per step): prints the spilled
 * variables the preamble set, each followed by NUL, a separator, then its
 * initial environment exactly as the kernel delivered it (/proc/$$/environ).
 */
function checkScript(spilled: readonly string[]): string {
  const reads = spilled.map((name) => ` "$${name}"`).join("");
  return [
    "set -euo pipefail",
    spilled.length === 0 ? ":" : `printf '%s\\0'${reads}`,
    `printf '${SEPARATOR_ESCAPED}'`,
    "while IFS= read -r -d '' kv; do printf '%s\\0' \"$kv\"; done </proc/$$/environ",
  ].join("\n");
}

const SEPARATOR = "\u0001--environ--\u0001";
const SEPARATOR_ESCAPED = "\\001--environ--\\001";

function digest(parts: Iterable<Buffer>): string {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part);
  return hash.digest("hex");
}

function expectedNames(values: Record<string, string>): Map<string, string> {
  // RECIPE_VAR_<key> for every key, the ASCII upper-case alias; aliases in sorted key order, last wins.
  const out = new Map<string, string>();
  const keys = Object.keys(values).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const key of keys) out.set(`RECIPE_VAR_${key}`, values[key]!);
  const prefixed = new Set(out.keys());
  for (const key of keys) {
    const alias = key.replace(/[a-z]/g, (c) => c.toUpperCase());
    // A prefixed name claimed first keeps it; between aliases the last one wins.
    if (!prefixed.has(alias)) out.set(alias, values[key]!);
  }
  return out;
}

async function pool<T>(count: number, width: number, run: (index: number) => Promise<T>) {
  let next = 0;
  const workers = Array.from({ length: width }, async () => {
    while (next < count) await run(next++);
  });
  await Promise.all(workers);
}

describe("fuzz: random bash steps against the real kernel", () => {
  it(`${STEPS} steps (seed ${SEED}): no E2BIG; every value byte-identical or reported`, async () => {
    const realLimit = probeLimits().execLimit;
    const parentEnv: Record<string, string> = { ...process.env } as Record<string, string>;
    for (let i = 0; i < 6; i++) parentEnv[`FUZZ_INHERITED_${i}`] = "i".repeat(60 * KIB);
    // One step in ten runs under a parent environment with large inherited variables.
    const plain = createRuntime({ preset: "recipe-runner-compat" });
    const heavy = createRuntime({ preset: "recipe-runner-compat", parentEnv });
    const tmp = root();
    const random = prng(SEED);
    const inputs = Array.from({ length: STEPS }, () => makeStep(random, realLimit));
    // Dropping (an over-cap value whose alias cannot be spilled) is rare at
    // random now that the denylist skips most such names first: step 0 always
    // carries one, so a short run covers the path too.
    inputs[0] = {
      values: { ...inputs[0]!.values, lc_all: "l".repeat(PER_VALUE_ENV_CAP + 1) },
      execLimit: realLimit,
    };
    const stats = { spilled: 0, dropped: 0, skipped: 0, trimmed: 0, bytes: 0, maxStep: 0 };
    const failures: string[] = [];

    const only = process.env["FUZZ_ONLY"]?.split(",").map(Number);
    await pool(STEPS, CONCURRENCY, async (index) => {
      if (only !== undefined && !only.includes(index)) return;
      const { values, execLimit } = inputs[index]!;
      const runtime = index % 10 === 9 ? heavy : plain;
      const where = `seed ${SEED} step ${index}`;
      const limits = { execLimit, maxArgStrlen: 131_072 };
      const all = expectedNames(values);
      try {
        // The pure plan tells which names to expect; the run must agree with it.
        // The script counts against the budget and names the spilled
        // variables, so plan with the very script the run gets: spilling
        // more only lengthens it, so this reaches a fixed point.
        let script = checkScript([]);
        let plan = runtime.planBash(script, { values, limits, tmpdir: tmp });
        for (let round = 0; ; round++) {
          const next = checkScript(plan.spill.spilled.map((v) => v.name));
          if (next === script) break;
          if (round === 8) throw new Error(`${where}: the plan never settles on a script`);
          script = next;
          plan = runtime.planBash(script, { values, limits, tmpdir: tmp });
        }
        const reported = new Set(
          plan.variables
            .filter((v) => (v.fate === "skipped" || v.fate === "dropped") && all.has(v.name))
            .map((v) => v.name),
        );
        const spilledNames = plan.spill.spilled.map((v) => v.name);
        const result = await runtime.bash(script, {
          values,
          limits,
          tmpdir: tmp,
        });
        const unreported = [...reported].filter(
          (name) =>
            !result.skipped.some((s) => s.name === name && s.reason) &&
            !result.dropped.some((d) => d.name === name && d.reason),
        );
        if (unreported.length > 0) failures.push(`${where}: not reported: ${unreported}`);
        if (JSON.stringify(result.spilled.map((v) => v.name)) !== JSON.stringify(spilledNames)) {
          failures.push(`${where}: the run spilled other names than the plan`);
        }
        // Every expected name is either spilled or inline with its exact value.
        const spilled = new Set(spilledNames);
        for (const [name, value] of all) {
          if (reported.has(name) || spilled.has(name)) continue;
          if (plan.bounded.env.get(name) !== value) failures.push(`${where}: ${name} not inline`);
        }
        for (const name of spilled) {
          if (plan.bounded.env.has(name)) failures.push(`${where}: ${name} spilled and inline`);
        }
        const stdout = String(result.stdout);
        const at = stdout.indexOf(SEPARATOR);
        const spilledOut = stdout.slice(0, at);
        const environ = stdout.slice(at + SEPARATOR.length);
        // The kernel delivered exactly the planned environment (as a set: engines may order it).
        const planned = [...plan.bounded.env].map(([n, v]) => `${n}=${v}`).sort();
        const delivered = environ.split("\0").slice(0, -1).sort();
        if (at < 0 || JSON.stringify(delivered) !== JSON.stringify(planned)) {
          failures.push(`${where}: the delivered environment differs from the plan`);
        }
        const expectedSpilled = spilledNames.map((n) => `${all.get(n)}\0`).join("");
        if (digest([Buffer.from(spilledOut)]) !== digest([Buffer.from(expectedSpilled)])) {
          const got = spilledOut.split("\0");
          const bad = spilledNames.filter((n, i) => got[i] !== all.get(n));
          failures.push(`${where}: spilled values differ for ${JSON.stringify(bad)}`);
        }
        stats.spilled += result.spilled.length;
        stats.skipped += result.skipped.length;
        stats.dropped += plan.spill.dropped.length;
        stats.trimmed += plan.bounded.dropped.length;
        const size = Object.values(values).reduce((n, v) => n + Buffer.byteLength(v), 0);
        stats.bytes += size;
        stats.maxStep = Math.max(stats.maxStep, size);
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        failures.push(`${where}: ${code === "E2BIG" ? "raw E2BIG" : `error ${String(code)}`}`);
      }
      if (failures.length > 20) throw new Error(failures.join("\n"));
    });

    expect(failures).toEqual([]);
    expect(leftovers(tmp)).toEqual([]);
    // The fuzz must really have exercised every path.
    expect(stats.spilled).toBeGreaterThan(0);
    expect(stats.dropped).toBeGreaterThan(0);
    expect(stats.skipped).toBeGreaterThan(0);
    expect(stats.trimmed).toBeGreaterThan(0);
    console.info(`fuzz ${STEPS} steps seed ${SEED}: ${JSON.stringify(stats)}`);
    // Generous: thousands of spawns on a shared, loaded two-core host.
  }, 600_000);
});
