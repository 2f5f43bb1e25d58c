#!/usr/bin/env node
// npm run test:mutants [-- --only NAME[,NAME…]] [--list] [--skip-native] [--keep] [--no-baseline]
//                         [--timeout SECONDS]
//
// Removes each control of test/mutants/table.mjs once, runs the tests its row
// names, and prints whether they went red. The working tree is never touched:
// the tracked and untracked (not ignored) files are copied to a scratch
// directory (node_modules linked, build/ copied when there is one), each
// mutant is applied there, the native ones rebuilt (`node-gyp build`, which
// recompiles the changed file and relinks; `node-gyp rebuild` once when the
// tree has no build), the row's test files run (vitest, native project) and
// the file restored. Before the first mutant the rows' test files run once
// unmutated (the baseline): red means nothing if they fail anyway. A mutant
// whose tests run past --timeout (300 s) is killed with its process group and
// counts as red (timeout): vitest cannot interrupt a loop that never yields.
// A row whose search text is not found exactly once stops
// everything before any test runs, so the table cannot rot silently.
//
// Exit status: 0 when every mutant went red (rows marked `equivalent` are not
// run; a row marked `kernel` whose tests all skip on this host is "skipped
// here", not a survivor: run it on the kernel tier), 1 when one stayed green
// or could not be built or compiled, 2 for a usage error or a table that
// does not match the sources.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { MUTANTS } from "../test/mutants/table.mjs";
import { copyTreeFiles } from "./tree-copy.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

function usage(message) {
  process.stderr.write(
    `mutants: ${message}\nusage: npm run test:mutants -- [--only NAME[,NAME...]] [--list] [--skip-native] [--keep] [--no-baseline] [--timeout SECONDS]\n`,
  );
  process.exit(2);
}

function parseArgs(argv) {
  const options = {
    only: [],
    list: false,
    skipNative: false,
    keep: false,
    baseline: true,
    timeout: 300,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--list") options.list = true;
    else if (arg === "--skip-native") options.skipNative = true;
    else if (arg === "--keep") options.keep = true;
    else if (arg === "--no-baseline") options.baseline = false;
    else if (arg === "--timeout") {
      options.timeout = Number(argv[++i]);
      if (!Number.isInteger(options.timeout) || options.timeout <= 0) {
        usage("--timeout needs a whole number of seconds");
      }
    } else if (arg === "--only") {
      const value = argv[++i];
      if (value === undefined) usage("--only needs a name");
      options.only.push(...value.split(",").filter((name) => name !== ""));
    } else usage(`unknown argument ${arg}`);
  }
  const known = new Set(MUTANTS.map((row) => row.name));
  for (const name of options.only) if (!known.has(name)) usage(`no mutant named ${name}`);
  return options;
}

/** How often `search` occurs in `text` (overlaps counted). */
export function occurrences(text, search) {
  let count = 0;
  for (let at = text.indexOf(search); at >= 0; at = text.indexOf(search, at + 1)) count++;
  return count;
}

/** Every row's search text, checked against the sources in `dir`: a list of problems. */
export function tableProblems(dir) {
  const problems = [];
  for (const row of MUTANTS) {
    const path = join(dir, row.file);
    if (!existsSync(path)) {
      problems.push(`${row.name}: ${row.file} does not exist`);
      continue;
    }
    const count = occurrences(readFileSync(path, "utf8"), row.search);
    if (count !== 1) problems.push(`${row.name}: search text found ${count} times in ${row.file}`);
    for (const test of row.tests) {
      if (!existsSync(join(dir, test))) problems.push(`${row.name}: ${test} does not exist`);
    }
  }
  return problems;
}

function run(command, args, cwd, log) {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  if (log !== undefined) {
    writeFileSync(log, `$ ${command} ${args.join(" ")}\n${result.stdout}${result.stderr}`);
  }
  return result;
}

function tail(text, lines = 25) {
  return text.split("\n").slice(-lines).join("\n");
}

/** A copy of the tree as it is now (uncommitted edits included), node_modules linked. */
function scratchCopy() {
  const dir = mkdtempSync(join(tmpdir(), "exactspawn-mutants-"));
  // Tests run hosts as other users (a test user, nobody) from the package root.
  chmodSync(dir, 0o755);
  copyTreeFiles(root, dir);
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
  if (buildOfThisTree()) {
    cpSync(join(root, "build"), join(dir, "build"), { recursive: true, preserveTimestamps: true });
  }
  mkdirSync(join(dir, ".mutant-logs"));
  return dir;
}

/**
 * Whether build/ was configured for this tree: gyp writes absolute paths into
 * it, and one configured elsewhere (a git worktree whose node_modules is
 * another checkout's) does not build in the copy; the copy then rebuilds once.
 */
function buildOfThisTree() {
  const makefile = join(root, "build/exactspawn.target.mk");
  return existsSync(makefile) && readFileSync(makefile, "utf8").includes(`${root}/native/`);
}

function nodeGyp(dir, verb, log) {
  return run(
    process.execPath,
    [join(root, "node_modules/node-gyp/bin/node-gyp.js"), verb],
    dir,
    log,
  );
}

/** dist/ compiled from the copy's src/, with its stamp (what `npm run compile` does). */
function compileDist(dir, log) {
  const tsc = join(root, "node_modules/typescript/bin/tsc");
  const result = run(process.execPath, [tsc, "-p", "tsconfig.build.json"], dir, log);
  if (result.status !== 0) return result;
  execFileSync("chmod", ["+x", "dist/cli.js"], { cwd: dir });
  execFileSync(process.execPath, ["scripts/dist-stamp.mjs", "--write"], { cwd: dir });
  return result;
}

/** The cgroup2 mount point (from mountinfo, never assumed), or undefined. */
function cgroup2Root() {
  for (const line of readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const fields = line.split(" ");
    const dash = fields.indexOf("-");
    if (dash > 0 && fields[dash + 1] === "cgroup2") return fields[4];
  }
  return undefined;
}

/**
 * A cgroup of its own for one test run, so everything the run started — a
 * mutant can leave children that ignore every signal, or loop for ever — is
 * ended with cgroup.kill, setsid daemons included. Undefined where no cgroup
 * can be made (then only the run's process group is ended on a timeout).
 */
function makeCgroup() {
  const base = cgroup2Root();
  if (base === undefined) return undefined;
  try {
    return mkdtempSync(join(base, "exactspawn-mutants-"));
  } catch {
    return undefined;
  }
}

/** Kills what is left in `cgroup`, waits until it is empty, removes it; the commands it held. */
function endCgroup(cgroup) {
  const procs = () =>
    readFileSync(join(cgroup, "cgroup.procs"), "utf8")
      .split("\n")
      .filter((pid) => pid !== "");
  const left = procs().map((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
    } catch {
      return pid;
    }
  });
  // Processes in cgroups below (a contained step's) count too: kill the whole tree.
  const populated = () => /populated 1/.test(readFileSync(join(cgroup, "cgroup.events"), "utf8"));
  if (populated()) writeFileSync(join(cgroup, "cgroup.kill"), "1");
  const until = Date.now() + 30_000;
  while (populated()) {
    if (Date.now() > until) throw new Error(`mutants: ${cgroup} does not empty`);
    spawnSync("sleep", ["0.1"]);
  }
  removeCgroupTree(cgroup);
  return left;
}

/** Removes an empty cgroup and the cgroups below it (a contained step's), deepest first. */
function removeCgroupTree(cgroup) {
  for (const entry of readdirSync(cgroup, { withFileTypes: true })) {
    if (entry.isDirectory()) removeCgroupTree(join(cgroup, entry.name));
  }
  rmdirSync(cgroup);
}

/**
 * The test files, native project, in a process group (and a cgroup) of
 * their own: a mutant can make a test loop for ever (a cycle check
 * removed), which vitest cannot interrupt, so past `seconds` the run is
 * killed and the row counts as killed by the timeout. A killed run never
 * reaches its global teardown, which removes the run's TMPDIR: each run gets
 * a TMPDIR of its own here (0755, as the suite's fault hosts run as nobody
 * below it), removed once its processes are gone. Resolves to
 * { status, stdout, timedOut, left } (`left`: commands still running after
 * the run, then killed).
 */
export function runTests(dir, tests, log, seconds) {
  const args = [
    join(root, "node_modules/vitest/vitest.mjs"),
    "run",
    "--project",
    "native",
    ...tests,
  ];
  const cgroup = makeCgroup();
  // The shell joins the cgroup before it execs vitest: nothing starts outside it.
  const [command, argv] =
    cgroup === undefined
      ? [process.execPath, args]
      : [
          "/bin/sh",
          ["-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup, process.execPath, ...args],
        ];
  const runTmp = mkdtempSync(join(tmpdir(), "exactspawn-mutants-run-"));
  chmodSync(runTmp, 0o755);
  return new Promise((resolve) => {
    const child = spawn(command, argv, {
      cwd: dir,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, TMPDIR: runTmp },
    });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (cgroup !== undefined) writeFileSync(join(cgroup, "cgroup.kill"), "1");
      // Node reaps the leader and emits its exit in one step: no exit code yet means unreaped.
      else if (child.exitCode === null && child.signalCode === null) {
        process.kill(-child.pid, "SIGKILL"); // pid pinned: the group's leader is our unreaped child
      }
    }, seconds * 1000);
    child.on("close", (status) => {
      clearTimeout(timer);
      const left = cgroup === undefined ? [] : endCgroup(cgroup);
      rmSync(runTmp, { recursive: true, force: true });
      const note =
        left.length === 0 ? "" : `\nleft running after the run, killed: ${left.join("; ")}\n`;
      writeFileSync(log, `$ vitest ${args.slice(1).join(" ")}\n${output}${note}`);
      resolve({ status, stdout: output, timedOut, left });
    });
  });
}

function list() {
  for (const row of MUTANTS) {
    const kind = row.native ? "native" : "ts";
    const mark =
      row.equivalent !== undefined
        ? `  (equivalent: ${row.equivalent})`
        : row.kernel !== undefined
          ? `  (kernel: ${row.kernel})`
          : "";
    process.stdout.write(`${row.name}  [${kind}] ${row.file}  → ${row.tests.join(", ")}${mark}\n`);
  }
}

function printTable(results) {
  const width = Math.max(...results.map((r) => r.name.length), 7);
  const lines = [`${"mutant".padEnd(width)}  kind    result         seconds`];
  for (const r of results) {
    lines.push(
      `${r.name.padEnd(width)}  ${(r.native ? "native" : "ts").padEnd(6)}  ${r.result.padEnd(13)}  ${r.seconds ?? ""}`,
    );
  }
  process.stdout.write(`\n${lines.join("\n")}\n`);
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (options.list) {
    list();
    return 0;
  }
  const problems = tableProblems(root);
  if (problems.length > 0) {
    process.stderr.write(
      `mutants: the table does not match the sources:\n  ${problems.join("\n  ")}\n`,
    );
    return 2;
  }
  let rows = MUTANTS.filter((row) => options.only.length === 0 || options.only.includes(row.name));
  if (options.skipNative) rows = rows.filter((row) => !row.native);
  // TypeScript first: the native rows leave a rebuilt addon behind them.
  rows = [...rows.filter((row) => !row.native), ...rows.filter((row) => row.native)];
  const dir = scratchCopy();
  process.stdout.write(`mutants: scratch copy in ${dir}\n`);
  const logs = join(dir, ".mutant-logs");
  const results = [];
  try {
    const live = rows.filter((row) => row.equivalent === undefined);
    if (live.some((row) => row.native) && !existsSync(join(dir, "build/Makefile"))) {
      process.stdout.write("mutants: no build/ in the tree: node-gyp rebuild once in the copy\n");
      if (nodeGyp(dir, "rebuild", join(logs, "rebuild.log")).status !== 0) {
        process.stderr.write(`mutants: the unmutated addon does not build (${logs}/rebuild.log)\n`);
        return 1;
      }
    }
    if (compileDist(dir, join(logs, "compile.log")).status !== 0) {
      process.stderr.write("mutants: the unmutated tree does not compile\n");
      return 1;
    }
    if (options.baseline && live.length > 0) {
      const tests = [...new Set(live.flatMap((row) => row.tests))];
      process.stdout.write(`mutants: baseline: ${tests.length} test files, unmutated\n`);
      const base = await runTests(dir, tests, join(logs, "baseline.log"), options.timeout * 4);
      if (base.status !== 0 || base.timedOut) {
        process.stderr.write(
          `mutants: the tests fail without any mutant, so red would prove nothing:\n${tail(base.stdout + base.stderr)}\n`,
        );
        return 1;
      }
    }
    let distMutated = false;
    for (const row of rows) {
      if (row.native && distMutated) {
        // dist/ still holds the last TypeScript mutant.
        compileDist(dir);
        distMutated = false;
      }
      if (row.equivalent !== undefined) {
        results.push({ name: row.name, native: row.native, result: "equivalent" });
        continue;
      }
      const started = Date.now();
      const path = join(dir, row.file);
      const original = readFileSync(path, "utf8");
      writeFileSync(
        path,
        original.replace(row.search, () => row.replace),
      );
      process.stdout.write(`mutants: ${row.name} (${row.file}) …\n`);
      let result;
      try {
        result = await mutantResult(dir, row, logs, options.timeout);
      } finally {
        writeFileSync(path, original);
      }
      if (!row.native) distMutated = true;
      const seconds = Math.round((Date.now() - started) / 1000);
      results.push({ name: row.name, native: row.native, result, seconds });
      process.stdout.write(`mutants: ${row.name}: ${result} (${seconds} s)\n`);
    }
  } finally {
    if (options.keep) process.stdout.write(`mutants: kept ${dir} (logs in ${logs})\n`);
    else rmSync(dir, { recursive: true, force: true });
  }
  printTable(results);
  // "skipped here": a row marked `kernel` whose tests cannot run on this host (see table.mjs).
  const killed = new Set(["red", "red (timeout)", "equivalent", "skipped here"]);
  const bad = results.filter((r) => !killed.has(r.result));
  if (bad.length > 0) {
    process.stdout.write(
      `\n${bad.length} mutant(s) not killed: ${bad.map((r) => r.name).join(", ")}\n`,
    );
    return 1;
  }
  return 0;
}

/** "red", "red (timeout)", "green", or "error: …" (a mutant that does not build or compile proves nothing). */
async function mutantResult(dir, row, logs, seconds) {
  const log = (step) => join(logs, `${row.name}.${step}.log`);
  if (row.native) {
    const build = nodeGyp(dir, "build", log("build"));
    if (build.status !== 0) {
      process.stderr.write(tail(build.stdout + build.stderr));
      return "error: build";
    }
  } else {
    const tsc = compileDist(dir, log("tsc"));
    if (tsc.status !== 0) {
      process.stderr.write(tail(tsc.stdout + tsc.stderr));
      return "error: compile";
    }
  }
  const tests = await runTests(dir, row.tests, log("vitest"), seconds);
  if (tests.left.length > 0) {
    process.stdout.write(
      `mutants: ${row.name} left ${tests.left.length} process(es) running, killed\n`,
    );
  }
  if (tests.timedOut) return "red (timeout)";
  if (tests.status === 0) {
    process.stdout.write(`${tail(tests.stdout, 12)}\n`);
    // Every test skipped (a control only a kernel tier can show): nothing was proven here.
    if (onlySkipped(tests.stdout))
      return row.kernel !== undefined ? "skipped here" : "green (all skipped)";
    return "green";
  }
  return "red";
}

/** Whether vitest's summary counts skipped tests and no passed or failed one. */
export function onlySkipped(output) {
  // vitest colours its summary.
  const summary = /Tests\s+([^\n]*)/.exec(output.replace(/\x1b\[[0-9;]*m/g, ""))?.[1] ?? "";
  return /\bskipped\b/.test(summary) && !/\b(passed|failed)\b/.test(summary);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main();
}
