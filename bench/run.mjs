#!/usr/bin/env node
// Runs every spawn benchmark with its anchors side by side in one run and
// prints medians and ratios. Needs `npm run compile` (imports ../dist) and cc.
// Usage: [BUN=/path/to/bun] node bench/run.mjs [--quick] [--only=1,2,8,...] (rows by number; 8-11
// are the environment, argv and planning rows of issue 14)
import { spawnSync as cpSpawnSync, execFileSync, spawn as spawnChild } from "node:child_process";
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { execa } from "execa";
import { nativeStatus, spawn, spawnSync } from "../dist/index.js";
import { buildAnchor, findBun, runAnchor, runBunAnchor } from "./anchor.mjs";
import { median, pairedRatio } from "./stats.mjs";

const TRUE = "/bin/true";
const quick = process.argv.includes("--quick");
// Many short interleaved rounds: on a shared 2-core machine the load drifts, and
// the median of short rounds tracks it far better than a few long ones.
const ROUNDS = quick ? 5 : 9;
const SEQ = quick ? 40 : 80;
const onlyArg = process.argv.find((a) => a.startsWith("--only="));
const only = onlyArg === undefined ? null : new Set(onlyArg.slice(7).split(","));
const wanted = (row) => only === null || only.has(String(row));

const anchor = buildAnchor();
const bun = findBun();

/** Spawns per second of Bun.spawn under Bun (the runtime peer); records its CPU per spawn. */
function bunRate(mode, count, inflight, extra = []) {
  const [ns, cpuNs] = runBunAnchor(bun, [mode, count, inflight, TRUE, ...extra]);
  cpu.last = cpuNs / 1000 / count;
  return count / (ns / 1e9);
}

/** The Bun contender of a row, or none when no Bun binary is at hand. */
const withBun = (mode, count, inflight, extra) =>
  bun === null ? {} : { bun: () => bunRate(mode, count, inflight, extra) };

/** Parent CPU (µs per spawn) of the last measured round, by contender key. */
const cpu = {};

/** Spawns per second of the C loop (its own clock); records its own CPU per spawn. */
function cRate(mode, count, inflight, holdMib = 0, extra = []) {
  const [ns, cpuNs] = runAnchor(anchor, [mode, count, inflight, holdMib, TRUE, ...extra]);
  cpu.last = cpuNs / 1000 / count;
  return count / (ns / 1e9);
}

async function rate(count, inflight, startOne) {
  let next = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const lane = async () => {
    while (next < count) {
      next++;
      await startOne();
    }
  };
  await Promise.all(Array.from({ length: inflight }, lane));
  const elapsed = performance.now() - t0;
  const used = process.cpuUsage(c0);
  cpu.last = (used.user + used.system) / count;
  return count / (elapsed / 1000);
}

const cpIgnore = () =>
  new Promise((resolve, reject) => {
    const child = spawnChild(TRUE, [], { stdio: "ignore", env: {} });
    child.on("error", reject);
    child.on("exit", resolve);
  });

/** Interleaves the contenders round by round so drift hits all alike. */
async function compare(name, contenders) {
  const rates = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
  const cpus = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
  // One discarded round each first: JavaScript is compiled and optimised (on
  // V8's helper threads, which process.cpuUsage counts) while code is new.
  for (const run of Object.values(contenders)) await run();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [key, run] of Object.entries(contenders)) {
      rates[key].push(await run());
      cpus[key].push(cpu.last);
    }
  }
  return { name, rates, cpus };
}

const mediansOf = (samples) =>
  Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));

/** Prints a row from its per-round samples (spawns/s, and parent CPU µs when measured). */
function printRow({ name, rates, cpus }, goals) {
  const medians = mediansOf(rates);
  const parts = Object.entries(medians).map(([k, v]) => `${k} ${v.toFixed(0)}/s`);
  const ratios = Object.keys(rates)
    .filter((k) => k !== "ours")
    .map((k) => {
      const ratio = pairedRatio(rates.ours, rates[k]);
      const goal = goals[k];
      return `ours/${k} ${ratio.toFixed(2)}x${goal ? ` (goal >= ${goal}x ${ratio >= goal ? "met" : "MISSED"})` : ""}`;
    });
  // Parent CPU against each contender that measured its own: the C loop (a
  // blocking loop, the limit for throughput) and Bun.spawn (the same
  // asynchronous job in the runtime peer).
  const cpuRatios = Object.keys(cpus ?? {})
    .filter((k) => k !== "ours" && (k === "c" || k === "bun"))
    .map((k) => {
      const ratio = pairedRatio(cpus.ours, cpus[k]);
      const goal = k === "c" ? goals.cpu : goals.cpuBun;
      return `ours/${k} ${ratio.toFixed(2)}x${goal ? ` (goal <= ${goal}x ${ratio <= goal ? "met" : "MISSED"})` : ""}`;
    });
  const cpuLine = cpus
    ? `\n  parent CPU per spawn: ${Object.entries(mediansOf(cpus))
        .map(([k, v]) => `${k} ${v.toFixed(0)} µs`)
        .join(", ")}${cpuRatios.length === 0 ? "" : `; ${cpuRatios.join(", ")}`}`
    : "";
  console.log(`${name}\n  ${parts.join(", ")}\n  ${ratios.join(", ")}${cpuLine}`);
}

async function syncHoldingBench() {
  // spawnSync in a Node process holding 1 GiB of touched memory: child_process forks it.
  const script = `
    import { spawnSync } from ${JSON.stringify(new URL("../dist/index.js", import.meta.url).href)};
    import { spawnSync as cpSpawnSync } from "node:child_process";
    import { runAnchor } from ${JSON.stringify(new URL("./anchor.mjs", import.meta.url).href)};
    import { performance } from "node:perf_hooks";
    const hold = Buffer.alloc(1 << 30, 1);
    const count = ${quick ? 30 : 60}, cpCount = ${quick ? 3 : 5};
    const time = (n, f) => { const t0 = performance.now(); for (let i = 0; i < n; i++) f(); return n / ((performance.now() - t0) / 1000); };
    const out = { ours: [], c: [], child_process: [] };
    for (let r = 0; r < 5; r++) {
      out.ours.push(time(count, () => spawnSync("/bin/true", [], { stdio: "ignore" })));
      const [ns] = runAnchor(${JSON.stringify(anchor)}, ["ignore", count, 1, 1024, "/bin/true"]);
      out.c.push(count / (ns / 1e9));
      out.child_process.push(time(cpCount, () => cpSpawnSync("/bin/true", [], { stdio: "ignore", env: {} })));
    }
    console.log(JSON.stringify({ rss: process.memoryUsage().rss, held: hold.length, ...out }));
  `;
  const text = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
    maxBuffer: 1 << 20,
  });
  const result = JSON.parse(text);
  return {
    name: `(7) spawnSync /bin/true, parent holding 1 GiB (RSS ${(result.rss / 2 ** 30).toFixed(2)} GiB)`,
    rates: { ours: result.ours, c: result.c, child_process: result.child_process },
  };
}

async function holdingBench() {
  // A separate Node process holding 2 GiB of touched Buffer memory runs the contenders.
  const script = `
    import { spawn } from ${JSON.stringify(new URL("../dist/index.js", import.meta.url).href)};
    import { spawn as spawnChild } from "node:child_process";
    import { runAnchor } from ${JSON.stringify(new URL("./anchor.mjs", import.meta.url).href)};
    import { performance } from "node:perf_hooks";
    const hold = [Buffer.alloc(1 << 30, 1), Buffer.alloc(1 << 30, 1)];
    const count = ${quick ? 30 : 60}, cpCount = ${quick ? 3 : 5};
    const time = async (n, f) => { const t0 = performance.now(); for (let i = 0; i < n; i++) await f(); return n / ((performance.now() - t0) / 1000); };
    const out = { ours: [], c: [], child_process: [] };
    for (let r = 0; r < 5; r++) {
      out.ours.push(await time(count, () => spawn("/bin/true", [], { stdio: "ignore" })));
      const [ns] = runAnchor(${JSON.stringify(anchor)}, ["ignore", count, 1, 2048, "/bin/true"]);
      out.c.push(count / (ns / 1e9));
      out.child_process.push(await time(cpCount, () => new Promise((res) => spawnChild("/bin/true", [], { stdio: "ignore", env: {} }).on("exit", res))));
    }
    console.log(JSON.stringify({ rss: process.memoryUsage().rss, held: hold.length, ...out }));
  `;
  const text = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
    maxBuffer: 1 << 20,
  });
  const result = JSON.parse(text);
  return {
    name: `(4) sequential /bin/true, parent holding 2 GiB (RSS ${(result.rss / 2 ** 30).toFixed(2)} GiB)`,
    rates: { ours: result.ours, c: result.c, child_process: result.child_process },
  };
}

function threads() {
  return Number(/Threads:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))[1]);
}

async function concurrentBench() {
  const before = { threads: threads(), rss: process.memoryUsage().rss };
  const children = Array.from({ length: 1000 }, () =>
    spawn("/bin/sleep", ["1000"], { stdio: "ignore", reject: false }),
  );
  const during = { threads: threads(), rss: process.memoryUsage().rss };
  for (const child of children) child.kill("SIGKILL");
  await Promise.all(children.map((c) => c.result));
  const after = { threads: threads(), rss: process.memoryUsage().rss };
  const mib = (b) => (b / 2 ** 20).toFixed(1);
  console.log(
    `(5) 1,000 concurrent children\n  threads before ${before.threads}, with 1,000 alive ${during.threads}, after ${after.threads}; ` +
      `RSS before ${mib(before.rss)} MiB, with 1,000 alive ${mib(during.rss)} MiB (+${mib(during.rss - before.rss)}), after ${mib(after.rss)} MiB`,
  );
}

if (!nativeStatus().loaded) console.log(`NOTE: native addon not loaded (${nativeStatus().reason})`);
if (bun === null) {
  console.log(
    "NOTE: no Bun binary (set BUN=/path/to/bun; the npm package @oven/bun-linux-x64 has one): the Bun.spawn rows are skipped",
  );
}
console.log(
  `node ${process.versions.node}${bun === null ? "" : `, bun ${execFileSync(bun, ["--version"], { encoding: "utf8" }).trim()}`}, ${ROUNDS} rounds, medians of spawns/s; ratios are the median of each round's ratio\n`,
);

// Warm-up: JIT, page cache, the addon's first-use paths.
await rate(100, 1, () => spawn(TRUE, [], { stdio: "ignore" }));
await rate(30, 1, () => spawn(TRUE, []));
await rate(20, 1, () => execa(TRUE, [], { env: {}, extendEnv: false }));

if (wanted(1))
  printRow(
    await compare("(1) sequential /bin/true, stdio ignored", {
      ours: () => rate(SEQ, 1, () => spawn(TRUE, [], { stdio: "ignore" })),
      c: () => cRate("ignore", SEQ, 1),
      child_process: () => rate(Math.floor(SEQ / 3), 1, cpIgnore),
      ...withBun("ignore", SEQ, 1),
    }),
    { c: 0.85, child_process: 2.2, bun: 1, cpuBun: 1 },
  );
if (wanted(2))
  printRow(
    await compare("(2) sequential /bin/true, stdout+stderr captured", {
      ours: () => rate(SEQ, 1, () => spawn(TRUE, [])),
      c: () => cRate("capture", SEQ, 1),
      execa: () =>
        rate(Math.floor(SEQ / 3), 1, () => execa(TRUE, [], { env: {}, extendEnv: false })),
      ...withBun("capture", SEQ, 1),
    }),
    { c: 0.75, execa: 2.5 },
  );
if (wanted(3))
  printRow(
    await compare("(3) /bin/true, 16 in flight, stdio ignored", {
      ours: () => rate(SEQ * 2, 16, () => spawn(TRUE, [], { stdio: "ignore" })),
      c: () => cRate("ignore", SEQ * 2, 16),
      ...withBun("ignore", SEQ * 2, 16),
    }),
    { c: 0.8 },
  );
if (wanted(4)) printRow(await holdingBench(), { c: 0.8 });
if (wanted(5)) await concurrentBench();
if (wanted(6))
  printRow(
    await compare("(6) spawnSync /bin/true sequentially, stdio ignored", {
      ours: () => rate(SEQ, 1, () => spawnSync(TRUE, [], { stdio: "ignore" })),
      c: () => cRate("ignore", SEQ, 1),
      child_process: () =>
        rate(Math.floor(SEQ / 3), 1, () => cpSpawnSync(TRUE, [], { stdio: "ignore", env: {} })),
    }),
    { c: 0.85 },
  );
if (wanted(7)) printRow(await syncHoldingBench(), { c: 0.8, child_process: 10 });

/**
 * The environment the C loop builds for `spawn_loop … ENV_COUNT ENV_BYTES`:
 * "V%05d=xxx…", each string ENV_BYTES bytes long (NUL not counted), in order.
 * Frozen, as a runtime's snapshot is: a host passes the same base env to
 * thousands of spawns.
 */
function loopEnv(count, bytes) {
  const env = {};
  for (let i = 0; i < count; i++) {
    const name = `V${String(i).padStart(5, "0")}`;
    env[name] = "x".repeat(bytes - name.length - 1);
  }
  return Object.freeze(env);
}

const envRows = [
  [2, 100, "2 variables", 0.92, SEQ],
  [100, 100, "100 variables of 100 B", 0.85, SEQ],
  [1000, 100, "1,000 variables of 100 B", 0.85, SEQ],
  [10000, 100, "10,000 variables of 100 B", 0.8, Math.floor(SEQ / 2)],
];
if (wanted(8)) {
  for (const [count, bytes, label, goal, n] of envRows) {
    const env = loopEnv(count, bytes);
    printRow(
      await compare(`(8) sequential /bin/true, stdio ignored, ${label} (same envp)`, {
        ours: () => rate(n, 1, () => spawn(TRUE, [], { stdio: "ignore", env })),
        c: () => cRate("ignore", n, 1, 0, [count, bytes]),
      }),
      { c: goal },
    );
  }
}
if (wanted(9)) {
  // The same 10,000-variable envp handed over as a fresh (unfrozen) record per spawn.
  const frozen = loopEnv(10000, 100);
  const n = Math.floor(SEQ / 2);
  // The records are copied before the clock starts: copying is the caller's cost, not ours.
  const fresh = () => {
    const records = Array.from({ length: n }, () => ({ ...frozen }));
    return rate(n, 1, () => spawn(TRUE, [], { stdio: "ignore", env: records.pop() }));
  };
  printRow(
    await compare("(9) sequential /bin/true, 10,000 variables of 100 B, a new record per spawn", {
      ours: fresh,
      c: () => cRate("ignore", n, 1, 0, [10000, 100]),
      ...withBun("ignore", n, 1, [10000, 100]),
    }),
    { c: 0.6 },
  );
}
if (wanted(10)) {
  const args = Array.from({ length: 1000 }, () => "a".repeat(1000));
  printRow(
    await compare("(10) sequential /bin/true, stdio ignored, 1 MB of argv (1,000 × 1,000 B)", {
      ours: () => rate(SEQ, 1, () => spawn(TRUE, args, { stdio: "ignore" })),
      c: () => cRate("ignore", SEQ, 1, 0, [0, 0, 1000, 1000]),
    }),
    { c: 0.85 },
  );
}
if (wanted(11)) {
  const { default: pino } = await import("pino");
  const { createRuntime } = await import("../dist/index.js");
  const runtime = createRuntime({ logger: pino({ level: "silent" }) });
  const values = {};
  for (let i = 0; i < 1000; i++) values[`value_${i}`] = "v".repeat(20 + (i % 200));
  for (let i = 0; i < 50; i++) runtime.planBash("true", { values });
  const samples = [];
  for (let i = 0; i < 500; i++) {
    const t0 = performance.now();
    runtime.planBash("true", { values });
    samples.push(performance.now() - t0);
  }
  const ms = median(samples);
  console.log(
    `(11) runtime.planBash, 1,000 step values\n  median ${ms.toFixed(3)} ms (goal <= 1 ms ${ms <= 1 ? "met" : "MISSED"})`,
  );
}
