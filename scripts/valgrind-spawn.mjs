#!/usr/bin/env node
// `npm run test:valgrind`: runs a Node process under valgrind --leak-check=full
// that spawns a few hundred children with stdout/stderr pipes through the
// native addon (plus the error paths: a missing file, a bad cwd, TypeErrors,
// pipe()/closeFd()), then fails if any "definitely lost" record or any invalid
// read/write/free/jump record has a frame in exactspawn.node. Node itself
// leaks at exit and V8's JIT confuses memcheck, so records without an addon
// frame are counted but do not fail the run.
//
// valgrind 3.19 (Debian 12) does not know pidfd_open(2): the addon then takes
// its abandon path only (kill, reap, throw), so on such a valgrind this run
// does not cover the exit watch. The LeakSanitizer pass of `npm run
// test:asan` does (captured output, timeouts, group signals, worker
// teardown).
//
// Usage: node scripts/valgrind-spawn.mjs [--spawns N]
// Needs valgrind on PATH (CI: apt-get install -y valgrind) and a built addon
// (npm run build:native) and dist/ (npm run compile).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const argIndex = process.argv.indexOf("--spawns");
const spawns = argIndex > 0 ? Number(process.argv[argIndex + 1]) : 10;

if (spawnSync("valgrind", ["--version"]).status !== 0) {
  console.error("test:valgrind: valgrind is not installed (apt-get install -y valgrind)");
  process.exit(1);
}

const dir = mkdtempSync(join(tmpdir(), "exactspawn-valgrind-"));
const loop = join(dir, "spawn-loop.mjs");
writeFileSync(
  loop,
  `
  import { createRequire } from "node:module";
  const { spawn } = await import(${JSON.stringify(join(root, "dist/index.js"))});
  const binding = createRequire(${JSON.stringify(join(root, "package.json"))})("node-gyp-build")(${JSON.stringify(root)});
  let ok = 0;
  // valgrind < 3.20 does not know pidfd_open(2) and answers ENOSYS: the
  // addon then kills and reaps the child it just spawned and throws. That
  // path (marshalling, posix_spawn with pipes, the abandon path, the system
  // error) is still checked; the exit watch needs a newer valgrind.
  let mode = "watch";
  try {
    await spawn("/bin/true", []);
  } catch (error) {
    // The loader's kernel probe meets the same ENOSYS and refuses the addon
    // at load (EXACTSPAWN_NATIVE=required turns that into this throw); the
    // raw binding below still takes the abandon path.
    const probe = String(error?.cause?.message ?? "");
    const noPidfd =
      (error.code === "ENOSYS" && error.syscall === "pidfd_open") ||
      probe.includes("pidfd_open (Linux 5.3) fails with ENOSYS");
    if (!noPidfd) throw error;
    mode = "abandon";
  }
  if (mode === "watch") {
    for (let i = 0; i < ${spawns}; i += 4) {
      const batch = [];
      for (let j = 0; j < 4; j++) {
        batch.push(spawn("/bin/sh", ["-c", "echo out; echo err >&2; exit " + (j % 3)], {
          env: { A: "x".repeat(j * 1000) }, reject: false,
        }));
      }
      for (const r of await Promise.all(batch)) if (r.stdout === "out\\n" && r.stderr === "err\\n") ok++;
    }
  } else {
    for (let i = 0; i < ${spawns}; i++) {
      const [outR, outW] = binding.pipe();
      const [errR, errW] = binding.pipe();
      try {
        binding.spawn({
          file: "/bin/sh", argv: ["sh", "-c", "echo out"], envp: ["A=" + "x".repeat(i % 4 * 1000)],
          stdio: [-1, outW, errW], setpgroup: i % 2 === 0, onExit() {},
        });
      } catch (error) {
        if (error.code === "ENOSYS" && error.syscall === "pidfd_open") ok++;
      }
      for (const fd of [outR, outW, errR, errW]) binding.closeFd(fd);
    }
  }
  // Error paths through the addon. Each spawn under valgrind forks valgrind
  // itself (seconds each), so the loops stay short.
  for (let i = 0; i < 3; i++) {
    try { await spawn("/nonexistent/x", []); } catch {}
    try { await spawn("/bin/true", [], { cwd: "/nonexistent" }); } catch {}
    try { binding.spawn({ file: "/bin/true", argv: ["a\\0"], envp: [], stdio: [-1, -1, -1], onExit() {} }); } catch {}
    try { binding.spawn({ file: "/bin/true", argv: ["x"], envp: [], stdio: new Array(2 ** 32 - 1), onExit() {} }); } catch {}
    const [r, w] = binding.pipe();
    binding.closeFd(r);
    binding.closeFd(w);
  }
  if (mode === "watch") {
    // A killed child.
    const sleeper = spawn("/bin/sleep", ["30"], { reject: false });
    sleeper.kill("SIGKILL");
    await sleeper;
  }
  console.log(JSON.stringify({ ok, spawns: ${spawns}, mode }));
  `,
);

const log = join(dir, "valgrind.log");
const started = Date.now();
const run = spawnSync(
  "valgrind",
  [
    "--leak-check=full",
    "--show-leak-kinds=definite",
    "--errors-for-leak-kinds=definite",
    "--num-callers=30",
    "--trace-children=no",
    // posix_spawn's vfork-style child is a fork of valgrind itself: keep it quiet.
    "--child-silent-after-fork=yes",
    `--log-file=${log}`,
    process.execPath,
    "--jitless",
    loop,
  ],
  {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, EXACTSPAWN_NATIVE: "required" },
    maxBuffer: 64 * 1024 * 1024,
  },
);
const seconds = ((Date.now() - started) / 1000).toFixed(1);
const text = readFileSync(log, "utf8");
rmSync(dir, { recursive: true, force: true });

// Records are blank-line separated blocks of "==pid== " lines.
const records = text
  .split(/\n==\d+== \n/)
  .map((block) => block.replace(/^==\d+== /gm, ""))
  .filter((block) => block.trim() !== "");
const kinds = [
  ["definitely lost", /definitely lost in loss record/],
  ["invalid read", /^Invalid read/m],
  ["invalid write", /^Invalid write/m],
  ["invalid free", /^Invalid free|^Mismatched free/m],
  ["uninitialised", /^Conditional jump or move depends on uninitialised|^Use of uninitialised/m],
];
const summary = {};
const addonRecords = [];
for (const record of records) {
  const kind = kinds.find(([, pattern]) => pattern.test(record));
  if (kind === undefined) continue;
  const inAddon = /exactspawn\.node/.test(record);
  summary[kind[0]] ??= { total: 0, inAddon: 0 };
  summary[kind[0]].total++;
  if (inAddon) {
    summary[kind[0]].inAddon++;
    addonRecords.push(record);
  }
}
const leakSummary = /LEAK SUMMARY:[\s\S]*?suppressed:[^\n]*/.exec(text)?.[0] ?? "(no leak summary)";
const errorSummary = /ERROR SUMMARY:[^\n]*/.exec(text)?.[0] ?? "(no error summary)";

console.log(`test:valgrind: ${seconds} s, node exit ${run.status ?? run.signal}`);
console.log(`child stdout: ${run.stdout.trim()}`);
console.log(leakSummary.replace(/==\d+== /g, ""));
console.log(errorSummary);
console.log(`records by kind (total / with an exactspawn.node frame): ${JSON.stringify(summary)}`);

let failed = false;
if (run.status !== 0) {
  console.error(`test:valgrind: the spawn loop failed:\n${run.stderr}`);
  failed = true;
}
let report = {};
try {
  report = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}");
} catch {
  report = {};
}
if (report.ok !== spawns) {
  console.error(`test:valgrind: ${report.ok}/${spawns} spawns gave the expected output`);
  failed = true;
}
if (addonRecords.length > 0) {
  console.error(`test:valgrind: ${addonRecords.length} record(s) in the addon:`);
  for (const record of addonRecords) console.error(`---\n${record}`);
  failed = true;
}
if (failed) process.exit(1);
console.log(
  `test:valgrind: clean in mode "${report.mode}" (no definitely lost or invalid access in exactspawn.node)`,
);
if (report.mode === "abandon") {
  console.log(
    "test:valgrind: note: this valgrind lacks pidfd_open (needs >= 3.20), so the exit watch was not exercised",
  );
}
