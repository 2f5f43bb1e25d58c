#!/usr/bin/env node
// Where a small spawn's parent CPU goes, in steady state: sequential
// /bin/true, stdio to /dev/null, 2 variables, interleaved rounds after one
// discarded warm-up round each. Contenders:
//   c            the C posix_spawn + waitpid loop (bench/spawn_loop.c), the anchor
//   posix_spawn  the addon called directly, no JavaScript policy
//   child_path   the same, through the addon's own child path (clone + execve,
//                taken when an exec control is set)
//   child_path_uid  the child path with `uid` set (the host's own, so no
//                privilege is needed): a credential-changing child, through
//                the exec helper (docs/spawn.md)
//   spawn        exactspawn's spawn(): the whole library (needs npm run compile)
// Prints median spawns/s, median parent CPU µs per spawn (process.cpuUsage,
// every thread; the C loop's own CPU clock) and each one's CPU over the C
// loop's (the median of the per-round ratios).
// Usage: node bench/child-path.bench.mjs [spawnsPerRound=1000] [rounds=5]
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawn } from "../dist/index.js";
import { buildAnchor, runAnchor } from "./anchor.mjs";
import { median, pairedRatio } from "./stats.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const binding = createRequire(import.meta.url)("node-gyp-build")(root);
// The exec helper beside the addon, as the library sets it (src/native.ts).
binding.setHelperPath?.(join(root, "build/Release/exactspawn-helper"));
const count = Number(process.argv[2] ?? 1000);
const rounds = Number(process.argv[3] ?? 5);
const anchor = buildAnchor();

const ARGV = Buffer.from("/bin/true\0");
// The envp spawn_loop builds for "2 10": two 10-byte strings.
const ENV = { V00000: "xxx", V00001: "xxx" };
const ENVP = Buffer.from("V00000=xxx\0V00001=xxx\0");

const direct = (controls) => () =>
  new Promise((resolve) =>
    binding.spawn({
      file: "/bin/true",
      argv: ARGV,
      argvCount: 1,
      envp: ENVP,
      envpCount: 2,
      stdio: [-1, -1, -1],
      controls,
      onExit: resolve,
    }),
  );

/** [spawns per second, parent CPU µs per spawn] of one round of `once`. */
async function round(once) {
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await once();
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  return [count / seconds, (cpu.user + cpu.system) / count];
}

const contenders = {
  c: async () => {
    const [ns, cpuNs] = runAnchor(anchor, ["ignore", count, 1, 0, "/bin/true", 2, 10]);
    return [count / (ns / 1e9), cpuNs / 1000 / count];
  },
  posix_spawn: () => round(direct(undefined)),
  child_path: () => round(direct({})),
  child_path_uid: () => round(direct({ uid: process.getuid() })),
  spawn: () => round(() => spawn("/bin/true", [], { env: ENV, stdio: "ignore" })),
};
const results = Object.fromEntries(Object.keys(contenders).map((name) => [name, []]));
for (const run of Object.values(contenders)) await run(); // warm-up
for (let r = 0; r < rounds; r++) {
  for (const [name, run] of Object.entries(contenders)) results[name].push(await run());
}
const cpusOf = (name) => results[name].map(([, micros]) => micros);
for (const name of Object.keys(contenders)) {
  const rate = median(results[name].map(([perSecond]) => perSecond));
  const cpu = median(cpusOf(name));
  const overC = pairedRatio(cpusOf(name), cpusOf("c"));
  console.log(
    `${name.padEnd(15)} ${rate.toFixed(0).padStart(5)} spawns/s  ${cpu.toFixed(0).padStart(4)} µs parent CPU/spawn  ${overC.toFixed(2)}x the C loop's CPU`,
  );
}
