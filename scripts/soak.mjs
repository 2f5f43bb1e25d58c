#!/usr/bin/env node
// `npm run soak`: one host runs N bash steps through runtime.bash, 16 in
// flight, with random step values: most small, a share over the per-value
// cap (they spill to files), a few steps whose values together exceed the
// exec budget (the largest spill first). Every step prints the byte length of
// its first value, read back through the environment or the spill preamble,
// and must match. Every 1,000 steps it samples this process's fd count, RSS
// and zombie children and prints the curve; at the end it counts
// entries of the library's left in its private TMPDIR (must be 0).
//
// Usage: node scripts/soak.mjs [--steps N] [--json]   (default N = 50,000)
// Needs dist/ (npm run compile). Exit status 0 only when nothing failed,
// nothing leaked and no directory was left.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openFdCount, zombieChildren } from "./proc-state.mjs";

const root = new URL("..", import.meta.url).pathname;
const { createRuntime, PER_VALUE_ENV_CAP, envByteBudget, nativeStatus } = await import(
  join(root, "dist/index.js")
);

const flag = (name) => process.argv.indexOf(name);
const steps = flag("--steps") > 0 ? Number(process.argv[flag("--steps") + 1]) : 50_000;
const json = flag("--json") > 0;
const inFlight = 16;
const sampleEvery = Math.min(1000, Math.max(100, Math.floor(steps / 10)));

// Seeded, so a failing run can be replayed.
let state = 0x5eed;
const random = () => {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

const fds = openFdCount;
const rssMiB = () => Math.round(process.memoryUsage.rss() / 1048576);
const zombies = () => zombieChildren().length;

const privateTmp = mkdtempSync(join(tmpdir(), "exactspawn-soak-"));
const runtime = createRuntime({ parentEnv: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
const budget = envByteBudget();
const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 ,.-_";

function stepValues(kind) {
  const values = {};
  const text = (n) => {
    const c = alphabet[Math.floor(random() * alphabet.length)];
    return c.repeat(n);
  };
  if (kind === "overBudget") {
    // Enough large values that the block is over the whole exec budget.
    const each = Math.floor(PER_VALUE_ENV_CAP * 0.8);
    const count = Math.ceil(budget / each) + 1;
    for (let i = 0; i < count; i++) values[`v${i}`] = text(each);
    return values;
  }
  const count = 1 + Math.floor(random() * 4);
  for (let i = 0; i < count; i++) {
    values[`v${i}`] =
      kind === "overCap" && i === 0
        ? text(PER_VALUE_ENV_CAP + 1 + Math.floor(random() * 4096))
        : text(Math.floor(random() * 2048));
  }
  return values;
}

const counts = { ok: 0, failed: 0, spilledSteps: 0, overCap: 0, overBudget: 0 };
const failures = [];
const curve = [];
const sample = (done) => {
  const point = { steps: done, fds: fds(), rssMiB: rssMiB(), zombies: zombies() };
  curve.push(point);
  if (!json) console.log(`soak: ${JSON.stringify(point)}`);
};

// One step first: what lives as long as the host starts with it (the exit
// watch's epoll and eventfd, the orphan reaper's, the cleanup watchdog's pipe
// and its two pidfds) and belongs to the baseline, not to the growth.
await runtime.bash("true");
const started = Date.now();
sample(0);
let next = 0;
let done = 0;
async function worker() {
  while (next < steps) {
    const index = next++;
    const roll = random();
    const kind = roll < 0.01 ? "overBudget" : roll < 0.15 ? "overCap" : "small";
    if (kind !== "small") counts[kind]++;
    const values = stepValues(kind);
    try {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a bash expansion, not a template
      const result = await runtime.bash('printf %s "${#RECIPE_VAR_v0}"', {
        values,
        tmpdir: privateTmp,
        step: `soak-${index}`,
      });
      if (result.output !== String(values.v0.length)) {
        throw new Error(`step ${index}: read back ${result.output}, expected ${values.v0.length}`);
      }
      if (result.spilled.length > 0) counts.spilledSteps++;
      counts.ok++;
    } catch (error) {
      counts.failed++;
      if (failures.length < 10) failures.push(`step ${index} (${kind}): ${error?.message}`);
    }
    done++;
    if (done % sampleEvery === 0) sample(done);
  }
}
await Promise.all(Array.from({ length: inFlight }, worker));
if (curve.at(-1)?.steps !== done) sample(done);
// Give the last exits a moment before the final count (no timing assertion):
// the last steps' pipes close a tick or two after their results arrive. What
// lives as long as the host is in the baseline (the warm-up step above); the
// slack of 4 covers a replaced watchdog's descriptors.
const settled = () => zombies() === 0 && fds() <= curve[0].fds + 4;
for (let i = 0; i < 100 && !settled(); i++) await new Promise((r) => setTimeout(r, 20));
const end = { fds: fds(), rssMiB: rssMiB(), zombies: zombies() };
const leftover = readdirSync(privateTmp).filter((n) => n.includes("exactspawn")).length;
rmSync(privateTmp, { recursive: true, force: true });

const summary = {
  steps,
  native: nativeStatus().loaded,
  durationSeconds: Math.round((Date.now() - started) / 100) / 10,
  ok: counts.ok,
  failed: counts.failed,
  spilledSteps: counts.spilledSteps,
  overCapSteps: counts.overCap,
  overBudgetSteps: counts.overBudget,
  start: curve[0],
  end,
  leftoverDirs: leftover,
  failures,
  curve,
};
if (json) console.log(JSON.stringify(summary));
else {
  const { curve: _curve, ...rest } = summary;
  console.log(`soak: done ${JSON.stringify(rest)}`);
}
const clean =
  counts.failed === 0 && leftover === 0 && end.zombies === 0 && end.fds <= curve[0].fds + 4;
process.exit(clean ? 0 : 1);
