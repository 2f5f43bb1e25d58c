#!/usr/bin/env node
// The platform matrix.
//   node scripts/matrix.mjs [--core] [--only node22,bun,...]
//       runs scripts/matrix-core.mjs (require and import, load, exact envp,
//       async and sync spawn, exit and signal, streamed output, a spilled
//       300 KB bash value, a sandbox, exit) under this Node, the engines floor
//       (Node 20.19 and 22.12), Node 22/24/26 (x64), Node 24 for arm64 under
//       qemu-aarch64, Bun (glibc and musl builds) and Deno, and prints the table: platform, runtime, version, the
//       addon file in use (or the fallback and why), result. The musl rows
//       run no JavaScript (none runs on musl here): scripts/musl-core.mjs
//       builds the addon's native core into a static driver and runs it, and
//       scripts/matrix-musl-layout.mjs runs a musl program in each layout musl
//       is installed in and checks the library tells musl from its evidence.
//   node scripts/matrix.mjs --suite 24 [test files...]
//       runs the whole vitest suite (or the files given) under Node 24 (22 and
//       26 likewise) and ends with one line: Node version, addon file in use,
//       tests and files passed/failed/skipped, exit status, seconds
//       (scripts/matrix-suite.mjs).
// Runtimes come from the npm registry, pinned in scripts/toolchains.mjs.
// Exit status 1 when a row fails that is expected to pass; rows expected to
// fail today (see EXPECTED) are reported as such.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { muslLayoutMissing, runMuslLayouts } from "./matrix-musl-layout.mjs";
import { runSuite } from "./matrix-suite.mjs";
import {
  MUSL_CORE_VERSION,
  MUSL_TARGETS,
  muslCoreMissing,
  muslCoreSummary,
  runMuslCore,
} from "./musl-core.mjs";
import { toolchainBin } from "./toolchains.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const flagValue = (flag) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);

/** Rows that fail today for a known reason outside this repository's reach, or not yet fixed. */
const EXPECTED = {};

const QEMU_SYSROOT = "/usr/aarch64-linux-gnu";
/** What the musl rows run instead of a JavaScript runtime and the addon file. */
const DRIVER_ADDON = "native core, static driver (no musl JS runtime here)";

/** The musl layout rows' one run (scripts/matrix-musl-layout.mjs). */
let layouts;

function runtimes() {
  return [
    {
      key: "node",
      platform: `linux-${process.arch}`,
      runtime: "node",
      command: () => [process.execPath],
    },
    // The engines floor (package.json): where require(esm) first works on each line.
    ...["20", "22"].map((v) => ({
      key: `node${v}-floor`,
      platform: "linux-x64",
      runtime: "node",
      command: () => [toolchainBin(`node${v}Floor`)],
    })),
    ...["22", "24", "26"].map((v) => ({
      key: `node${v}`,
      platform: "linux-x64",
      runtime: "node",
      command: () => [toolchainBin(`node${v}`)],
    })),
    {
      key: "node-arm64",
      platform: "linux-arm64 (qemu-user)",
      runtime: "node",
      unavailable: () =>
        !existsSync(QEMU_SYSROOT) || spawnSync("sh", ["-c", "command -v qemu-aarch64"]).status !== 0
          ? "needs qemu-user and crossbuild-essential-arm64 (apt)"
          : undefined,
      command: () => ["qemu-aarch64", "-L", QEMU_SYSROOT, toolchainBin("nodeArm64")],
    },
    { key: "bun", platform: "linux-x64", runtime: "bun", command: () => [toolchainBin("bun")] },
    {
      key: "bun-musl",
      platform: "linux-x64-musl",
      runtime: "bun",
      unavailable: () => {
        const run = spawnSync(toolchainBin("bunMusl"), ["--version"], { encoding: "utf8" });
        return run.status === 0
          ? undefined
          : `Bun's musl build does not start here: ${(run.stderr || "").trim().split("\n")[0]}`;
      },
      command: () => [toolchainBin("bunMusl")],
    },
    {
      key: "deno",
      platform: "linux-x64",
      runtime: "deno",
      command: () => [toolchainBin("deno"), "run", "-A"],
    },
    ...[0, 1, 2].map((index) => ({
      key: `musl-layout-${index}`,
      platform: "linux-x64-musl",
      runtime: "none",
      unavailable: muslLayoutMissing,
      driver: async () => {
        layouts ??= runMuslLayouts();
        const row = (await layouts)[index];
        return {
          version: "musl-gcc",
          addon: `C library told (no addon loaded): ${row.layout}`,
          result: `${row.ok ? "pass" : "FAIL"} (interpreter ${row.interpreter}, mapped ${row.mapped}: ${row.both}; from the maps alone: ${row.mapsAlone})`,
          ok: row.ok,
        };
      },
    })),
    ...Object.entries(MUSL_TARGETS).map(([arch, target]) => ({
      key: `musl-${arch}`,
      platform: target.platform,
      runtime: "none",
      unavailable: () => muslCoreMissing(arch),
      driver: () => {
        const result = runMuslCore(arch);
        const loaded = result.checks.some((c) => c.name === "load prebuild" && c.outcome === "ok");
        const addon = `${DRIVER_ADDON}${loaded ? `; ${relative(root, result.prebuild)} loaded by musl's ld.so (Node-API stubbed)` : ""}`;
        return {
          version: MUSL_CORE_VERSION,
          addon,
          result: muslCoreSummary(result),
          ok: result.ok,
        };
      },
    })),
  ];
}

function version(command) {
  const flag = command.includes("run") ? command.slice(0, -2) : command;
  const run = spawnSync(flag[0], [...flag.slice(1), "--version"], { encoding: "utf8" });
  const line = (run.stdout || run.stderr || "").trim().split("\n")[0];
  return line.match(/\d+\.\d+\.\d+/)?.[0] ?? line;
}

/** The addon file the library would load, asked of that runtime (named in the row even when it crashes). */
const LOCATE = `const m = await import(${JSON.stringify(join(root, "dist/native-locate.js"))});
console.log(m.locateAddon(${JSON.stringify(root)}).path ?? "");`;

async function core(selected) {
  const rows = [];
  for (const r of runtimes()) {
    if (selected && !selected.includes(r.key)) continue;
    const started = Date.now();
    const missing = r.unavailable?.();
    if (missing) {
      rows.push({ ...r, version: "-", addon: "-", result: `skipped: ${missing}`, ok: null });
      continue;
    }
    if (r.driver) {
      let outcome;
      try {
        outcome = await r.driver();
      } catch (error) {
        outcome = { version: "-", result: `unavailable: ${error.message}`, ok: false };
      }
      rows.push({ addon: DRIVER_ADDON, ...r, ...outcome });
      continue;
    }
    let command;
    try {
      command = r.command();
    } catch (error) {
      rows.push({
        ...r,
        version: "-",
        addon: "-",
        result: `unavailable: ${error.message}`,
        ok: false,
      });
      continue;
    }
    const env = { ...process.env, EXACTSPAWN_LOG_LEVEL: "silent", NODE_DISABLE_COMPILE_CACHE: "1" };
    const locate = spawnSync(
      command[0],
      [...command.slice(1), "--input-type=module", "-e", LOCATE],
      {
        cwd: root,
        encoding: "utf8",
        env,
      },
    );
    const where = locate.stdout.trim();
    const run = spawnSync(
      command[0],
      [...command.slice(1), join(root, "scripts/matrix-core.mjs")],
      {
        cwd: root,
        encoding: "utf8",
        env,
        // A step that never settles fails on its own (matrix-core.mjs); this bounds the rest.
        timeout: 120_000,
      },
    );
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    let report;
    try {
      report = JSON.parse(run.stdout.trim().split("\n").pop());
    } catch {}
    const failed = report?.steps.filter((s) => s.ok === false) ?? [];
    const skipped = report?.steps.filter((s) => s.ok === null) ?? [];
    const exitOk = run.status === 0 && run.signal === null;
    const ok = report !== undefined && failed.length === 0 && exitOk;
    const crash = (run.stderr || "").trim().split("\n").filter(Boolean).slice(-2).join(" / ");
    let result = ok
      ? `pass (${report.steps.length - skipped.length}/${report.steps.length} steps, ${seconds} s)`
      : `FAIL: ${failed.map((s) => `${s.name}: ${s.detail}`).join("; ") || `exit ${run.status ?? run.signal}: ${crash.slice(0, 300)}`}`;
    if (ok && skipped.length > 0) {
      result += `; skipped: ${skipped.map((s) => `${s.name} (${s.detail})`).join("; ")}`;
    }
    if (report && !exitOk && failed.length === 0)
      result = `FAIL at exit (${run.status ?? run.signal}): ${crash.slice(0, 300)}`;
    if (report === undefined && run.error?.code === "ETIMEDOUT")
      result = "FAIL: did not finish within 120 s";
    const addon =
      report === undefined
        ? `${relative(root, where) || "none"} (did not finish)`
        : report.status.loaded
          ? relative(root, report.file ?? where) || "loaded"
          : `fallback${report?.status.reason ? `: ${report.status.reason.replace(/^could not load the native addon on [^:]*: /, "")}` : ""}`;
    rows.push({ ...r, version: version(command), addon, result, ok });
  }
  return rows;
}

function table(rows) {
  const lines = [
    "| platform | runtime | version | addon | result |",
    "| --- | --- | --- | --- | --- |",
  ];
  for (const r of rows) {
    const known = r.ok === false && EXPECTED[r.key] ? ` — known: ${EXPECTED[r.key]}` : "";
    lines.push(
      `| ${r.platform} | ${r.runtime} | ${r.version} | ${r.addon} | ${r.result}${known} |`,
    );
  }
  return lines.join("\n");
}

const suite = flagValue("--suite");
if (suite !== undefined) {
  const node = toolchainBin(`node${suite}`);
  const only = args.slice(args.indexOf("--suite") + 2).filter((a) => !a.startsWith("--"));
  process.exit(runSuite({ node, version: version([node]), root, only }));
}

if (!existsSync(join(root, "dist/index.js"))) {
  spawnSync("npm", ["run", "--silent", "compile"], { cwd: root, stdio: "inherit" });
}
const rows = await core(flagValue("--only")?.split(","));
console.log(table(rows));
const unexpected = rows.filter((r) => r.ok === false && !EXPECTED[r.key]);
process.exit(unexpected.length > 0 ? 1 : 0);
