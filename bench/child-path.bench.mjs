#!/usr/bin/env node
// posix_spawn against the addon's own child path (clone + execve, taken when
// an exec control is set), through the addon directly so nothing but the
// start path differs: sequential /bin/true, stdio to /dev/null, interleaved
// rounds, median spawns/s and mean parent CPU µs per spawn.
// Usage: node bench/child-path.bench.mjs [spawnsPerRound=1000] [rounds=5]
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { median } from "./stats.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const binding = createRequire(import.meta.url)("node-gyp-build")(root);
const count = Number(process.argv[2] ?? 1000);
const rounds = Number(process.argv[3] ?? 5);

const once = (controls) =>
  new Promise((resolve) =>
    binding.spawn({
      file: "/bin/true",
      argv: ["true"],
      envp: [],
      stdio: [-1, -1, -1],
      controls,
      onExit: resolve,
    }),
  );

/** [spawns per second, parent CPU µs per spawn] of one round. */
async function round(controls) {
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await once(controls);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  return [count / seconds, (cpu.user + cpu.system) / count];
}

const paths = { posix_spawn: undefined, child_path: {} };
const results = { posix_spawn: [], child_path: [] };
for (const controls of Object.values(paths)) await round(controls); // warm-up
for (let r = 0; r < rounds; r++) {
  for (const [name, controls] of Object.entries(paths)) results[name].push(await round(controls));
}
for (const [name, samples] of Object.entries(results)) {
  const rate = median(samples.map(([perSecond]) => perSecond));
  const cpu = samples.reduce((sum, [, micros]) => sum + micros, 0) / samples.length;
  console.log(
    `${name.padEnd(12)} ${rate.toFixed(0)} spawns/s (median)  ${cpu.toFixed(0)} µs parent CPU/spawn (mean)`,
  );
}
