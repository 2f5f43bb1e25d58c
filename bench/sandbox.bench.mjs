#!/usr/bin/env node
// What the `sandbox` option costs a spawn: sequential /bin/true through the
// library's own spawn (stdio ignored, the same small env), plain against
// sandboxed ({ writable: [a temp dir], network: false }: Landlock ruleset
// built per spawn, no_new_privs, Landlock and the seccomp filter applied in the
// child before exec) and against the same confinement through a wrapper
// binary, which costs a second exec: bwrap (read-only root, the temp dir
// bound writable, a fresh /dev, a new network namespace) and, as the lightest
// possible wrapper, `setpriv --no-new-privs` (no confinement at all, only the
// extra exec). A wrapper that is absent or cannot run here is skipped and said
// so. `nnp` is the unsandboxed child path (noNewPrivileges: true): the same
// clone-then-exec start a sandbox takes, without Landlock and seccomp; the
// `addon …` rows spawn through the addon directly with the resolved sandbox
// (none, Landlock only, the socket filter only, both; each without the
// read-only mount view, which `addon view` is alone and `addon all` adds), to
// show where the time goes. Where this host can make the view (root), `sandboxed`
// includes it and `sandboxed no view` is the same spawn with readOnlyView: false.
// Interleaved rounds; the median per contender of each round's mean ms/spawn.
// Needs `npm run compile` (imports ../dist).
// Usage: node bench/sandbox.bench.mjs [--quick]
import { spawnSync as cpSpawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { nativeStatus, normalizeSandbox, sandboxSupport, spawn } from "../dist/index.js";
import { resolveSandbox } from "../dist/spawn/sandbox.js";
import { median } from "./stats.mjs";

const TRUE = "/bin/true";
const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 5 : 11;
const PER_ROUND = quick ? 40 : 150;
const GOAL = 15; // % over an unsandboxed spawn (issue 13)
const env = { PATH: "/usr/bin:/bin" };

const support = sandboxSupport();
if (!nativeStatus().loaded || support.missing.length > 0) {
  console.log(
    `sandbox bench skipped: the sandbox cannot be enforced here (native ${nativeStatus().loaded}, ` +
      `missing ${support.missing.join(", ") || "nothing"}); see exactspawn sandbox`,
  );
  process.exit(0);
}

const work = mkdtempSync(join(tmpdir(), "exactspawn-sandbox-bench-"));
process.on("exit", () => rmSync(work, { recursive: true, force: true }));
const box = { writable: [work], network: false };

/** The absolute path of a wrapper that exists and runs /bin/true here, else a reason. */
function wrapper(name, args) {
  const path = ["/usr/local/bin", "/usr/bin", "/bin"]
    .map((dir) => join(dir, name))
    .find(existsSync);
  if (path === undefined) return { skip: `${name} is not installed` };
  const probe = cpSpawnSync(path, [...args, TRUE], { stdio: "ignore", env });
  if (probe.status !== 0) return { skip: `${name} cannot run here (exit ${probe.status})` };
  return { path, args: [...args, TRUE] };
}

const wrappers = {
  bwrap: wrapper("bwrap", [
    "--ro-bind",
    "/",
    "/",
    "--bind",
    work,
    work,
    "--dev",
    "/dev",
    "--unshare-net",
    "--",
  ]),
  setpriv: wrapper("setpriv", ["--no-new-privs"]),
};

// Where the time goes: the addon alone (no TypeScript per call), given the
// sandbox resolveSandbox makes for `box`, with only Landlock, only the socket
// filter, or both (no_new_privs is set in each).
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const binding = createRequire(import.meta.url)("node-gyp-build")(root);
const resolved = resolveSandbox(normalizeSandbox("bench", box), support);
const raw = (sandbox) => () =>
  new Promise((done) =>
    binding.spawn({
      file: TRUE,
      argv: ["true"],
      envp: ["PATH=/usr/bin:/bin"],
      stdio: [-1, -1, -1],
      sandbox,
      onExit: done,
    }),
  );

const contenders = {
  plain: () => spawn(TRUE, [], { stdio: "ignore", env }),
  nnp: () => spawn(TRUE, [], { stdio: "ignore", env, noNewPrivileges: true }),
  sandboxed: () => spawn(TRUE, [], { stdio: "ignore", env, sandbox: box }),
  "addon plain": raw(undefined),
  "addon landlock": raw({ ...resolved, seccomp: false, readOnlyView: false }),
  "addon seccomp": raw({ ...resolved, landlock: false, readOnlyView: false }),
  "addon both": raw({ ...resolved, readOnlyView: false }),
};
if (resolved.readOnlyView) {
  const noView = { ...box, readOnlyView: false };
  contenders["sandboxed no view"] = () =>
    spawn(TRUE, [], { stdio: "ignore", env, sandbox: noView });
  contenders["addon view"] = raw({ ...resolved, landlock: false, seccomp: false });
  contenders["addon all"] = raw(resolved);
} else {
  console.log(`read-only view: not made here (${support.readOnlyViewUnavailable})`);
}
for (const [name, w] of Object.entries(wrappers)) {
  if (w.skip !== undefined) console.log(`${name}: skipped, ${w.skip}`);
  else contenders[name] = () => spawn(w.path, w.args, { stdio: "ignore", env, reject: false });
}

/** Wrapper runs that did not exit 0 (their rounds are left out), by wrapper. */
const failed = {};

/** Mean ms per spawn over one round of sequential spawns; undefined if a wrapper failed. */
async function round(name, start, count) {
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    const result = await start();
    if (result.exitCode === 0) continue;
    const why = `exit ${result.exitCode ?? result.signal}`;
    if (!(name in wrappers)) throw new Error(`a benchmarked ${name} spawn ended with ${why}`);
    failed[name] = [...(failed[name] ?? []), why];
    return undefined;
  }
  return (performance.now() - t0) / count;
}

for (const [name, start] of Object.entries(contenders)) await round(name, start, 10); // warm-up
const samples = Object.fromEntries(Object.keys(contenders).map((name) => [name, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, start] of Object.entries(contenders)) {
    const sample = await round(name, start, PER_ROUND);
    if (sample !== undefined) samples[name].push(sample);
  }
}

const load = readFileSync("/proc/loadavg", "utf8").trim();
console.log(
  `sequential ${TRUE}, ${ROUNDS} rounds x ${PER_ROUND} spawns, Landlock ABI ${support.landlockAbi}, loadavg ${load}`,
);
const medians = {};
for (const [name, why] of Object.entries(failed)) {
  console.log(`${name}: ${why.length} round(s) left out, a run ended with ${why.join(", ")}`);
}
for (const [name, list] of Object.entries(samples)) {
  if (list.length === 0) continue;
  medians[name] = median(list);
  console.log(`${name.padEnd(14)} median ${medians[name].toFixed(3)} ms/spawn`);
}
// Where a sandboxed spawn's extra time goes, in part: the per-call resolution
// in TypeScript (every writable and program directory through realpath).
const normalized = normalizeSandbox("bench", box);
const resolveRounds = [];
for (let r = 0; r < ROUNDS; r++) {
  const t0 = performance.now();
  for (let i = 0; i < PER_ROUND; i++) resolveSandbox(normalized, support);
  resolveRounds.push((performance.now() - t0) / PER_ROUND);
}
console.log(
  `resolveSandbox median ${median(resolveRounds).toFixed(3)} ms/call (part of sandboxed)`,
);
const over = (name) => (medians[name] / medians.plain - 1) * 100;
const sandboxOver = over("sandboxed");
console.log(
  `ratio: ${sandboxOver.toFixed(1)}% sandboxed over plain (goal ≤ ${GOAL}%) ${sandboxOver <= GOAL ? "OK" : "OVER"}`,
);
const nnpOver = over("nnp");
console.log(
  `nnp over plain ${nnpOver >= 0 ? "+" : "−"}${Math.abs(nnpOver).toFixed(1)}% (the child path alone)`,
);
for (const name of Object.keys(wrappers)) {
  if (medians[name] === undefined) continue;
  const below = medians.sandboxed < medians[name];
  console.log(
    `ratio: ${over(name).toFixed(1)}% ${name} over plain; sandboxed is ` +
      `${((medians.sandboxed / medians[name]) * 100).toFixed(0)}% of its time (goal < 100%) ${below ? "OK" : "OVER"}`,
  );
}
