// Planning a 1,000-variable bash-step environment: median wall time of
// planSpill (with the bash argv sizer), and of planSpill + boundedEnv.
// Goal: ≤ 1 ms median. Run: npm run build && node bench/spill-plan.bench.mjs
import { bashArgvSizer, boundedEnv, PER_VALUE_ENV_CAP, planSpill } from "../dist/index.js";
import { median } from "./stats.mjs";

const WARMUP = 300;
const RUNS = 3000;
const BASH = "/bin/bash";
const COMMAND = 'printf %s "$RECIPE_VAR_report" | sha256sum\n';

function scenario(kind) {
  const env = new Map();
  const stepNames = new Set();
  const inheritedNames = new Set();
  const inherited = kind === "spills" ? 798 : 800;
  for (let i = 0; i < inherited; i++) {
    const name = `INHERITED_${i}`;
    env.set(name, "i".repeat(40 + (i % 60)));
    inheritedNames.add(name);
  }
  for (let i = 0; i < 100; i++) {
    const value = "s".repeat(kind === "spills" ? 2000 + i * 37 : 80 + i);
    for (const name of [`RECIPE_VAR_v${i}`, `V${i}`]) {
      env.set(name, value);
      stepNames.add(name);
    }
  }
  if (kind === "spills") {
    for (const name of ["RECIPE_VAR_report", "REPORT"]) {
      env.set(name, "r".repeat(PER_VALUE_ENV_CAP + 10));
      stepNames.add(name);
    }
  }
  // 1,000 variables either way: 200 step values, the rest inherited.
  return { env, stepNames, inheritedNames };
}

const silent = {
  debug() {},
  warn() {},
  info() {},
  error() {},
  trace() {},
  fatal() {},
};

function bench(label, fn) {
  for (let i = 0; i < WARMUP; i++) fn();
  const samples = [];
  let last;
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint();
    last = fn();
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const p90 = [...samples].sort((a, b) => a - b)[Math.floor(samples.length * 0.9)];
  console.log(
    `${label.padEnd(58)} median ${median(samples).toFixed(3)} ms  p90 ${p90.toFixed(3)} ms  ` +
      `(spilled ${last.spilled}, dropped ${last.dropped})`,
  );
}

for (const [kind, execLimit] of [
  ["none", 2 * 1024 * 1024],
  ["spills", 320 * 1024],
]) {
  const { env, stepNames, inheritedNames } = scenario(kind);
  const limits = { execLimit, maxArgStrlen: 131_072 };
  const plan = () =>
    planSpill({
      env,
      stepNames,
      file: BASH,
      argvBytes: bashArgvSizer({ bash: BASH, command: COMMAND, tmpdir: "/tmp" }),
      limits,
      log: silent,
    });
  bench(
    `planSpill, ${env.size} vars, ${kind === "none" ? "nothing spills" : "cap + budget spills"}`,
    () => {
      const p = plan();
      return { spilled: p.spilled.length, dropped: p.dropped.length };
    },
  );
  bench(`planSpill + boundedEnv, ${env.size} vars, ${kind}`, () => {
    const p = plan();
    const b = boundedEnv({
      env: p.inline,
      inheritedNames,
      file: BASH,
      argv: p.argv,
      limits,
      log: silent,
    });
    return { spilled: p.spilled.length, dropped: b.dropped.length };
  });
}

// Worst case for phase 2: 1,000 step values that all have to spill.
{
  const env = new Map();
  for (let i = 0; i < 1000; i++) env.set(`RECIPE_VAR_w${i}`, "w".repeat(500 + i));
  const stepNames = new Set(env.keys());
  const limits = { execLimit: 128 * 1024, maxArgStrlen: 131_072 };
  bench("planSpill, 1000 step values, all spill (worst case)", () => {
    const p = planSpill({
      env,
      stepNames,
      file: BASH,
      argvBytes: bashArgvSizer({ bash: BASH, command: COMMAND, tmpdir: "/tmp" }),
      limits,
      log: silent,
    });
    return { spilled: p.spilled.length, dropped: p.dropped.length };
  });
}
