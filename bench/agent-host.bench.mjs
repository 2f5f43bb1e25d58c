#!/usr/bin/env node
// The 1,000-step agent host of issue 29, measured: STEPS bash steps, CONCURRENCY at a time,
// each with three values (one of 2-5 MiB), a 5,000-key hostile context, a sandbox writable
// only in its own directory, a deadline, and its stdout lines sent to pino. Every TIMEOUT_EVERY-th
// step sleeps past its deadline. With --busy=MS the host blocks its own thread in bursts of MS
// (one free loop turn between them) for the whole run, as a host doing its own work would.
// Printed: wall time, failures by kind, each step's preparation (the call until the child has
// started), how late each timeout was killed (the result's killedAt − (the moment runtime.bash
// returned, the child started + its timeout); goal ≤ 200 ms), the library's log
// bytes per step (its own pino destination, apart from the host's stdout lines), host secrets
// seen by any step, and processes left behind.
// Needs `npm run compile` (imports ../dist). Usage:
//   node bench/agent-host.bench.mjs [--quick | --steps=1000] [--concurrency=16] [--busy=0] [--level=info]
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pino from "pino";
import { createRuntime, nativeStatus } from "../dist/index.js";

const arg = (name, fallback) => {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  return found === undefined ? fallback : found.slice(name.length + 3);
};
// --quick (what `exactspawn bench --quick` passes): 100 steps.
const STEPS = Number(arg("steps", process.argv.includes("--quick") ? 100 : 1000));
const CONCURRENCY = Number(arg("concurrency", 16));
const BUSY_MS = Number(arg("busy", 0));
const LEVEL = arg("level", "info");
const TIMEOUT_MS = 1500;
const TIMEOUT_EVERY = 25;
const GOAL_MS = 200;

// The host's own secrets: a step must see none of them.
const SECRETS = [
  "HOST_SECRET_TOKEN",
  "AWS_SECRET_ACCESS_KEY",
  "GITHUB_TOKEN",
  "DATABASE_URL",
  "NPM_TOKEN",
  "OPENAI_API_KEY",
  "MY_SERVICE_PASSWORD",
];
for (const name of SECRETS) process.env[name] = `secret-${name.toLowerCase()}`;

const now = () => performance.timeOrigin + performance.now();
const root = await mkdtemp(join(tmpdir(), "agent-host-bench-"));
const libraryLogPath = join(root, "library.log");
const hostLog = pino(
  { level: "info" },
  pino.destination({ dest: join(root, "lines.log"), sync: false }),
);
const libraryLog = pino({ level: LEVEL }, pino.destination({ dest: libraryLogPath, sync: false }));
const runtime = createRuntime({ logger: libraryLog, bareNames: ["TASK_DESCRIPTION"] });

const context = {
  ld_preload: "/tmp/evil.so",
  "bad key": "x",
  PATH: "/tmp/evil",
  task_description: "fix the flaky test",
};
for (let i = 0; i < 5000; i++) context[`key_${i}`] = `noise ${i}`;
// Four large values, 2-5 MiB, shared by the steps (the host would hold its own).
const large = [2, 3, 4, 5].map((mib) => "v".repeat(mib << 20));

const script = [
  'printf "report %s\\n" "$(printf %s "$RECIPE_VAR_report" | wc -c)"',
  'printf "task %s %s\\n" "$RECIPE_VAR_index" "$TASK_DESCRIPTION"',
  `printf "secrets %s\\n" "$(env | grep -cE '^(${SECRETS.join("|")})=')"`,
  'printf "%s\\n" "$RECIPE_VAR_note" > out.txt && cat out.txt',
].join("\n");

const block = new Int32Array(new SharedArrayBuffer(4));
let done = false;
async function busyHost() {
  let bursts = 0;
  while (!done && BUSY_MS > 0) {
    Atomics.wait(block, 0, 0, BUSY_MS);
    bursts++;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return bursts;
}

const counts = {};
const late = [];
const preparation = [];
let secretsSeen = 0;
let wrongOutput = 0;
async function runStep(index) {
  const dir = join(root, `step-${index}`);
  await mkdir(dir);
  const sleeps = index % TIMEOUT_EVERY === TIMEOUT_EVERY - 1;
  const calledAt = now();
  try {
    const handle = runtime.bash(sleeps ? "sleep 30" : script, {
      step: `task-${index}`,
      values: {
        report: large[index % large.length],
        index: String(index),
        note: `note ${index}`,
      },
      context,
      cwd: dir,
      sandbox: { writable: [dir] },
      timeout: sleeps ? TIMEOUT_MS : 60_000,
      killGraceMs: 500,
      reject: false,
    });
    // runtime.bash returns once the child has started: its deadline counts from here.
    const spawnedAt = now();
    preparation.push(spawnedAt - calledAt);
    const result = await handle;
    const kind = result.failure ?? "ok";
    counts[kind] = (counts[kind] ?? 0) + 1;
    if (result.failure === "timeout" && result.killedAt !== null) {
      late.push(result.killedAt - (spawnedAt + TIMEOUT_MS));
    }
    if (!sleeps) {
      const lines = result.output.split("\n");
      for (const line of lines) hostLog.info({ step: `task-${index}`, line }, "stdout");
      if (lines[2] !== "secrets 0") secretsSeen++;
      const expected = [
        `report ${large[index % large.length].length}`,
        `task ${index} fix the flaky test`,
        "secrets 0",
        `note ${index}`,
      ];
      if (result.output !== expected.join("\n")) wrongOutput++;
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const busy = busyHost();
const started = now();
let next = 0;
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < STEPS) await runStep(next++);
  }),
);
const wallMs = now() - started;
done = true;
const bursts = await busy;
await new Promise((resolve) => libraryLog.flush(resolve));
await new Promise((resolve) => hostLog.flush(resolve));
const libraryLogBytes = (await stat(libraryLogPath)).size;

/** Children of this process still alive, by argv[0] (the cleanup watchdog stays). */
async function childrenLeft() {
  const left = [];
  for (const task of await readdir("/proc/self/task")) {
    const text = await readFile(`/proc/self/task/${task}/children`, "utf8");
    for (const pid of text.split(" ").filter(Boolean)) {
      const argv = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "?");
      left.push(argv.split("\0")[0]);
    }
  }
  return left;
}

late.sort((a, b) => a - b);
preparation.sort((a, b) => a - b);
const at = (q, list = late) => list[Math.min(list.length - 1, Math.floor(q * list.length))];
const fmt = (ms) => (ms === undefined ? null : `${ms.toFixed(1)} ms`);
console.log(
  JSON.stringify(
    {
      engine: nativeStatus().loaded ? "native" : "child_process fallback",
      steps: STEPS,
      concurrency: CONCURRENCY,
      busyBurstMs: BUSY_MS,
      bursts,
      wallMs: Math.round(wallMs),
      stepsPerSecond: Number((STEPS / (wallMs / 1000)).toFixed(1)),
      failures: counts,
      expectedTimeouts: Math.floor(STEPS / TIMEOUT_EVERY),
      wrongOutput,
      secretsSeen,
      preparationMedian: fmt(at(0.5, preparation)),
      preparationMax: fmt(preparation[preparation.length - 1]),
      timeoutLateMedian: fmt(at(0.5)),
      timeoutLateMax: fmt(late[late.length - 1]),
      timeoutsOverGoal: late.filter((ms) => ms > GOAL_MS).length,
      libraryLogLevel: LEVEL,
      libraryLogBytesPerStep: Math.round(libraryLogBytes / STEPS),
      childrenLeft: await childrenLeft(),
    },
    null,
    2,
  ),
);
await rm(root, { recursive: true, force: true });
