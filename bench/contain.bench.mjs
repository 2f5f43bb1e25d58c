#!/usr/bin/env node
// What the `contain` option costs (docs/containment.md): sequential
// spawn('/bin/true') and runtime.bash('true'), uncontained against contained
// (a fresh cgroup per step: mkdir, two opens, the child's write into
// cgroup.procs, cgroup.kill at the exit, cgroup.events on the event set,
// cpu.stat read, rmdir). `spawn nnp` is the uncontained child path
// (noNewPrivileges: true), the same clone-then-exec start a contained child
// takes, to split the child path's share from the cgroup's. The PID
// namespace rows (`pidns`: mechanism "pid-namespace", the exec helper as the
// namespace's init, which forks the leader) have their own split: `spawn
// helper` is an uncontained child through the exec helper (`uid` set to the
// host's own), the same vfork-then-helper start without the namespace and the
// init's fork. Interleaved rounds; the median per contender of each round's
// mean ms/spawn, and the paired ratio to the uncontained row. Needs `npm run
// compile` (imports ../dist).
// Usage: node bench/contain.bench.mjs [--quick]
import { performance } from "node:perf_hooks";
import {
  cgroupSupport,
  createRuntime,
  nativeStatus,
  pidNamespaceSupport,
  spawn,
} from "../dist/index.js";
import { median, pairedRatio } from "./stats.mjs";

const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 5 : 11;
const PER_ROUND = quick ? 40 : 150;
const GOAL = 1.3; // × the uncontained spawn (issue 26)
const env = { PATH: "/usr/bin:/bin" };

const support = cgroupSupport();
const pid = pidNamespaceSupport();
if (!nativeStatus().loaded || (!support.available && !pid.available)) {
  console.log(`contain bench skipped: ${support.reason ?? "the addon is not loaded"}`);
  process.exit(0);
}

const runtime = createRuntime({ parentEnv: env });
const PIDNS = { mechanism: "pid-namespace" };
const uid = process.getuid();
const contenders = {
  spawn: () => spawn("/bin/true", [], { env, stdio: "ignore" }),
  "spawn nnp": () => spawn("/bin/true", [], { env, stdio: "ignore", noNewPrivileges: true }),
  ...(support.available && {
    "spawn contain": () =>
      spawn("/bin/true", [], { env, stdio: "ignore", contain: { mechanism: "cgroup" } }),
  }),
  ...(pid.available && {
    "spawn helper": () => spawn("/bin/true", [], { env, stdio: "ignore", uid }),
    "spawn pidns": () => spawn("/bin/true", [], { env, stdio: "ignore", contain: PIDNS }),
  }),
  bash: () => runtime.bash("true", { contain: false }),
  ...(support.available && {
    "bash contain": () => runtime.bash("true", { contain: { mechanism: "cgroup" } }),
  }),
  ...(pid.available && { "bash pidns": () => runtime.bash("true", { contain: PIDNS }) }),
};
const samples = Object.fromEntries(Object.keys(contenders).map((name) => [name, []]));

for (const run of Object.values(contenders)) for (let i = 0; i < 20; i++) await run(); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of Object.entries(contenders)) {
    const start = performance.now();
    for (let i = 0; i < PER_ROUND; i++) await run();
    samples[name].push((performance.now() - start) / PER_ROUND);
  }
}

const base = {
  "spawn nnp": "spawn",
  "spawn contain": "spawn",
  "spawn helper": "spawn",
  "spawn pidns": "spawn",
  "bash contain": "bash",
  "bash pidns": "bash",
};
console.log(
  `contain bench: ${ROUNDS} rounds × ${PER_ROUND} sequential steps, cgroup under ${support.parent ?? "(none)"}, PID namespace ${pid.available ? (pid.userNamespace ? "with a user namespace" : "alone") : "(none)"}`,
);
for (const [name, list] of Object.entries(samples)) {
  const against = base[name];
  const ratio =
    against === undefined ? "" : `  ${pairedRatio(list, samples[against]).toFixed(2)}× ${against}`;
  console.log(`${name.padEnd(14)} ${median(list).toFixed(3)} ms${ratio}`);
}
for (const [mechanism, spawnRow, bashRow] of [
  ["cgroup", "spawn contain", "bash contain"],
  ["pid-namespace", "spawn pidns", "bash pidns"],
]) {
  if (samples[spawnRow] === undefined) continue;
  const worst = Math.max(
    pairedRatio(samples[spawnRow], samples.spawn),
    pairedRatio(samples[bashRow], samples.bash),
  );
  console.log(
    `${mechanism} goal ≤ ${GOAL}×: ${worst <= GOAL ? "met" : "missed"} (worst ${worst.toFixed(2)}×)`,
  );
}
