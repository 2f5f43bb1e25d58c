#!/usr/bin/env node
// `npm run test:asan`: builds the addon with AddressSanitizer and
// UndefinedBehaviorSanitizer into .asan/ (a scratch copy of the native
// sources, so build/ is left alone), then runs the native test files against
// it with the sanitizer runtimes preloaded into Node. Any report fails the run
// (halt_on_error / -fno-sanitize-recover). Leak checking is off here because
// Node itself does not free everything at exit; scripts/valgrind-spawn.mjs
// checks the addon for leaks instead.
import { spawnSync } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const scratch = join(root, ".asan");
const run = (cmd, args, options = {}) => {
  const result = spawnSync(cmd, args, { stdio: "inherit", ...options });
  if (result.status !== 0) {
    console.error(`test:asan: ${cmd} ${args.join(" ")} failed (${result.status ?? result.signal})`);
    process.exit(1);
  }
};
const gccFile = (name) =>
  spawnSync("gcc", [`-print-file-name=${name}`], { encoding: "utf8" }).stdout.trim();

rmSync(scratch, { recursive: true, force: true });
mkdirSync(join(scratch, "scripts"), { recursive: true });
for (const item of [
  "binding.gyp",
  "native",
  "package.json",
  "scripts/native-stamp.mjs",
  "scripts/static-libc.mjs",
]) {
  cpSync(join(root, item), join(scratch, item), { recursive: true });
}
symlinkSync(join(root, "node_modules"), join(scratch, "node_modules"));

const sanitize =
  "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g";
// The addon with the sanitizers; the exec helper without them (a static
// executable: the sanitizer runtimes link only dynamically; it runs in its own
// process and never in Node's).
run("npx", ["node-gyp", "configure"], { cwd: scratch });
run("make", ["-C", "build", "BUILDTYPE=Release", "-j2", "exactspawn-helper"], { cwd: scratch });
run("make", ["-C", "build", "BUILDTYPE=Release", "-j2", "exactspawn"], {
  cwd: scratch,
  env: {
    ...process.env,
    CXXFLAGS: sanitize,
    CFLAGS: sanitize,
    LDFLAGS: "-fsanitize=address,undefined",
  },
});

// --leaks-only: skip the test files, run only the LeakSanitizer pass.
const leaksOnly = process.argv.includes("--leaks-only");
const files = process.argv.slice(2).filter((arg) => arg !== "--leaks-only");
if (!leaksOnly) {
  run(
    "npx",
    [
      "vitest",
      "run",
      "--project",
      "native",
      // The exit watch's other waiter (its own thread, as under Bun and Deno) on its files.
      "--project",
      "thread",
      ...(files.length > 0
        ? files
        : [
            // The files that drive the addon. Not the bash-step suites: their
            // children inherit LD_PRELOAD from the host's environment, so every
            // bash would run under ASan too (the 2,000-step fuzz took > 10 min).
            "test/native.test.ts",
            "test/native",
            "test/spawn/behaviour-native.test.ts",
            "test/spawn/host-exit.test.ts",
            "test/spawn/lifecycle.test.ts",
            "test/spawn/line-iterator.test.ts",
            "test/spawn/native-binding.test.ts",
            "test/spawn/native-engine.test.ts",
            "test/spawn/spawn-sync.test.ts",
            "test/spawn/deadline-keeper.test.ts",
            "test/spawn/deadline-busy-host.test.ts",
            "test/spawn/timeout-policy-spawn.test.ts",
            "test/step/runtime-spawn.test.ts",
            "test/faults",
          ]),
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        EXACTSPAWN_PREBUILD: scratch,
        EXACTSPAWN_EXPECT_ASAN: "1",
        LD_PRELOAD: `${gccFile("libasan.so")} ${gccFile("libubsan.so")}`,
        ASAN_OPTIONS: "detect_leaks=0:halt_on_error=1:abort_on_error=1",
        UBSAN_OPTIONS: "halt_on_error=1:print_stacktrace=1",
      },
    },
  );
}

const workload = join(scratch, "leak-workload.mjs");
writeFileSync(
  workload,
  `
  import { Worker } from "node:worker_threads";
  const dist = ${JSON.stringify(join(root, "dist/index.js"))};
  const { spawn } = await import(dist);
  for (let i = 0; i < 100; i += 4) {
    await Promise.all([0, 1, 2, 3].map((j) =>
      spawn("/bin/sh", ["-c", "echo out; echo err >&2; exit " + (j % 3)], { reject: false })));
  }
  for (let i = 0; i < 10; i++) {
    const run = spawn("/bin/sh", ["-c", "echo a; sleep 0.05; echo b"]);
    run.stdout.resume();
    await run;
  }
  await spawn("/bin/sh", ["-c", "setsid sleep 1 & echo x"], { timeout: 100, killGraceMs: 50, reject: false });
  await spawn("/bin/sh", ["-c", "sleep 5 & exec sleep 5"], { timeout: 100, killGraceMs: 50, reject: false });
  await spawn("/bin/sh", ["-c", "head -c 100000 /dev/zero"], { maxBuffer: 1000, reject: false });
  await spawn("/nonexistent").result.catch(() => {});
  await spawn("/bin/true", [], { cwd: "/nonexistent" }).result.catch(() => {});
  for (let i = 0; i < 10; i++) {
    const worker = new Worker(
      "import(" + JSON.stringify(dist) + ").then(async ({ spawn }) => { require('node:worker_threads').parentPort.postMessage(1); for (;;) await spawn('/bin/true', [], { stdio: 'ignore' }); })",
      { eval: true },
    );
    await new Promise((r) => worker.once("message", r));
    await new Promise((r) => setTimeout(r, 20 + i * 5));
    await worker.terminate();
  }
  // A load that fails part-way (exports that refuse one property, as a
  // terminating worker's would) leaves nothing behind: each name in turn.
  const addon = ${JSON.stringify(join(scratch, "build/Release/exactspawn.node"))};
  const loaded = { exports: {} };
  process.dlopen(loaded, addon);
  for (const name of Object.keys(loaded.exports)) {
    const refuse = (target, key, value) => {
      if (key === name) throw new Error("refused");
      return Reflect.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
    };
    const exports = new Proxy({}, { set: (t, k, v) => refuse(t, k, v), defineProperty: (t, k, d) => refuse(t, k, d.value) });
    try {
      process.dlopen({ exports }, addon);
      throw new Error("the load with " + name + " refused did not fail");
    } catch (error) {
      if (error.message !== "refused") throw error;
    }
  }
  console.log("leak workload done");
  `,
);
const logs = join(scratch, "lsan");
mkdirSync(logs);
const leakRun = spawnSync(process.execPath, [workload], {
  cwd: root,
  encoding: "utf8",
  env: {
    ...process.env,
    EXACTSPAWN_PREBUILD: scratch,
    LD_PRELOAD: `${gccFile("libasan.so")} ${gccFile("libubsan.so")}`,
    ASAN_OPTIONS: `detect_leaks=1:halt_on_error=1:log_path=${join(logs, "report")}`,
    LSAN_OPTIONS: "exitcode=0",
  },
});
if (!leakRun.stdout.includes("leak workload done")) {
  console.error(leakRun.stdout, leakRun.stderr);
  console.error("test:asan: the leak workload did not finish");
  process.exit(1);
}
const records = readdirSync(logs).flatMap((file) =>
  readFileSync(join(logs, file), "utf8").split(/\n(?=(?:Direct|Indirect) leak)/),
);
const leaks = records.filter((r) => /^(Direct|Indirect) leak/.test(r));
// Symbolized frames name the addon's functions and sources, unsymbolized ones its file.
const ours = leaks.filter((r) => /exactspawn::|\.\.\/native\/|exactspawn\.node/.test(r));
console.log(
  `test:asan: leak pass: ${leaks.length} leak records, ${ours.length} with an addon frame`,
);
if (ours.length > 0) {
  console.error(ours.join("\n"));
  process.exit(1);
}
console.log("test:asan: clean");
