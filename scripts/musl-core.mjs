#!/usr/bin/env node
// node scripts/musl-core.mjs [--only x64,arm64]
//
// Runs the addon's native core on musl, where no JavaScript runtime can load
// the addon here (no musl Node on the npm registry, Bun's musl build needs a
// musl libstdc++.so.6, Debian has no C++ runtime for musl). The driver
// test/fixtures/musl-core.cc is linked with the libc-facing files of
// native/core/ (unchanged; no Node-API) into a static binary with Zig
// (pinned in scripts/toolchains.mjs) for x86_64-linux-musl, run directly, and
// aarch64-linux-musl, run under qemu-aarch64 (no sysroot: it is static). It
// prints one line per check; see the driver for what each one proves
// (musl-core-children.cc: how it starts and watches children through the core). The
// musl prebuild itself is then loaded by musl's dynamic loader
// (test/fixtures/musl-load.c; its Node-API imports stubbed): the part of
// loading it that needs no JavaScript runtime. On x86-64 the loader program is
// built with Debian's musl-gcc and run directly; on aarch64 Zig links it
// against musl dynamically and qemu-aarch64 runs it with Debian's musl:arm64
// as sysroot (unpacked into the toolchain cache, not installed:
// scripts/debian-packages.mjs; ~5 s and a 9 MB package index the first time).
// Builds in a temporary directory, removed afterwards; Zig's global cache is
// the prebuild's (~/.cache/exactspawn-toolchains/zig-cache): a cold cache
// costs ~6 min per target (musl and libc++ for static linking), a warm one
// seconds. scripts/matrix.mjs --core shows both as rows. Exit status 1 when
// a check failed or a target could not be built or run.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { DEBIAN_PACKAGES, debianPackageDir } from "./debian-packages.mjs";
import { CACHE, TOOLCHAINS, toolchainBin } from "./toolchains.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The native/core/ files the driver links (those it calls and what they call). */
export const CORE = [
  "probe",
  "kernel_support",
  "spawn_process",
  "child_path",
  "clone3",
  "child_steps",
  "helper_plan",
  "memfd",
  "stdio_plan",
  "sandbox",
  "seccomp_filter",
  "child_exit",
  "reap",
  "run_sync",
  "pipe",
  "event_set",
  "signal_names",
  "resource_limits",
  "mount_view",
  "mount_view_probe",
  "cgroup",
  "watchdog",
  "orphan_reaper",
  "pid_namespace",
  "helper_file",
];

export const MUSL_TARGETS = {
  x64: { zig: "x86_64-linux-musl", platform: "linux-x64-musl", qemu: false, loader: "x86_64" },
  arm64: {
    zig: "aarch64-linux-musl",
    platform: "linux-arm64-musl (qemu-user)",
    qemu: true,
    loader: "aarch64",
  },
};

/**
 * The Node-API functions `file` imports, as C stubs that abort when called
 * (none is called by loading), written to `dir`. Returns { stubs, count } or { error }.
 */
function napiStubs(file, dir) {
  const imports = spawnSync("nm", ["-D", "--undefined-only", file], { encoding: "utf8" });
  if (imports.status !== 0) return { error: `nm -D: ${imports.stderr.trim()}` };
  const napi = imports.stdout
    .split("\n")
    .map((line) => line.trim().split(/\s+/).pop())
    .filter((symbol) => /^(napi_|node_api_|uv_)/.test(symbol));
  const stubs = join(dir, "napi-stubs.c");
  writeFileSync(
    stubs,
    [
      "#include <stdio.h>",
      "#include <stdlib.h>",
      'static void stub(const char* name) { fprintf(stderr, "stub %s called\\n", name); abort(); }',
      ...napi.map((symbol) => `void ${symbol}(void) { stub("${symbol}"); }`),
    ].join("\n"),
  );
  return { stubs, count: napi.length };
}

/**
 * Builds test/fixtures/musl-load.c (with the stubs, exporting them) into
 * `loader` for x86-64 with Debian's musl-gcc, run directly (musl's loader from
 * the `musl` package). Returns { command, via } or { skip } or { error }.
 */
function x64Loader(loader, sources) {
  if (
    !existsSync("/lib/ld-musl-x86_64.so.1") ||
    spawnSync("sh", ["-c", "command -v musl-gcc"]).status !== 0
  ) {
    return { skip: "needs musl-gcc and musl's loader (apt: musl-tools)" };
  }
  const build = spawnSync("musl-gcc", ["-O2", "-rdynamic", "-o", loader, ...sources], {
    encoding: "utf8",
  });
  if (build.status !== 0) return { error: `musl-gcc: ${build.stderr.trim()}` };
  return { command: [loader], via: "" };
}

/**
 * The same for aarch64: Zig links it dynamically against musl (interpreter
 * /lib/ld-musl-aarch64.so.1, NEEDED libc.so), and qemu-aarch64 runs it with
 * Debian's musl:arm64 (pinned in scripts/debian-packages.mjs, unpacked, not
 * installed) as its sysroot, so musl's own aarch64 loader is what loads the prebuild.
 */
function arm64Loader(loader, sources, dir) {
  let sysroot;
  try {
    sysroot = debianPackageDir("muslArm64");
  } catch (error) {
    return { skip: `no aarch64 musl loader: ${error.message}` };
  }
  const build = spawnSync(
    toolchainBin("zig"),
    [
      "build-exe",
      "-target",
      "aarch64-linux-musl",
      "-dynamic",
      "-lc",
      "-rdynamic",
      "-O",
      "ReleaseSafe",
      `-femit-bin=${loader}`,
      ...sources,
    ],
    { encoding: "utf8", env: zigEnv(dir) },
  );
  if (build.status !== 0) return { error: `zig build-exe: ${build.stderr.trim()}` };
  const { version } = DEBIAN_PACKAGES.muslArm64;
  return {
    command: ["qemu-aarch64", "-L", sysroot, loader],
    via: ` (Debian musl:arm64 ${version} under qemu-aarch64)`,
  };
}

/**
 * Loads prebuilds/linux-<arch>/exactspawn.musl.node (or `file`) with musl's
 * dynamic loader (test/fixtures/musl-load.c, built in `dir`, the Node-API
 * functions the file imports stubbed). Returns one check.
 */
export function loadPrebuild(
  arch,
  dir,
  file = join(root, `prebuilds/linux-${arch}/exactspawn.musl.node`),
) {
  const name = "load prebuild";
  if (!existsSync(file)) {
    return {
      outcome: "skip",
      name,
      detail: `no ${relative(root, file)} (npm run prebuild builds it)`,
    };
  }
  const napi = napiStubs(file, dir);
  if (napi.error) return { outcome: "FAIL", name, detail: napi.error };
  const loader = join(dir, "musl-load");
  const sources = [join(root, "test/fixtures/musl-load.c"), napi.stubs];
  const built = arch === "x64" ? x64Loader(loader, sources) : arm64Loader(loader, sources, dir);
  if (built.skip) return { outcome: "skip", name, detail: built.skip };
  if (built.error) return { outcome: "FAIL", name, detail: built.error };
  const version = readFileSync(join(root, "binding.gyp"), "utf8").match(/NAPI_VERSION=(\d+)/)?.[1];
  const [command, ...args] = built.command;
  const run = spawnSync(command, [...args, file, version ?? "?"], { encoding: "utf8" });
  const line = (run.stdout ?? "").trim().match(/^(ok|FAIL) load prebuild: (.*)$/);
  if (!line || (run.status === 0) !== (line[1] === "ok")) {
    const why = (run.stderr || String(run.error ?? "")).trim();
    return { outcome: "FAIL", name, detail: `exit ${run.status ?? run.signal}: ${why}` };
  }
  const detail =
    line[1] === "ok"
      ? `${line[2]}; ${napi.count} Node-API imports stubbed${built.via}`
      : `${line[2]}${built.via}`;
  return { outcome: line[1], name, detail };
}

/** Zig's caches: the global one the prebuild's, the local one in `dir`. */
function zigEnv(dir) {
  return {
    ...process.env,
    ZIG_GLOBAL_CACHE_DIR: join(CACHE, "zig-cache"),
    ZIG_LOCAL_CACHE_DIR: join(dir, "zig-local-cache"),
  };
}

/** What this machine lacks to build and run the target, or undefined. */
export function muslCoreMissing(arch) {
  if (process.platform !== "linux" || process.arch !== "x64") {
    return "needs an x86-64 Linux host (the pinned Zig is its x86-64 build)";
  }
  if (MUSL_TARGETS[arch].qemu && spawnSync("sh", ["-c", "command -v qemu-aarch64"]).status !== 0) {
    return "needs qemu-aarch64 (apt: qemu-user)";
  }
  return undefined;
}

/** A short version line for the matrix: the toolchain that built the driver. */
export const MUSL_CORE_VERSION = `zig ${TOOLCHAINS.zig.version}`;

/**
 * Builds the driver for one target and runs it. Returns { ok, build, checks,
 * output, seconds }: build is an error text when the build failed, checks
 * the parsed lines ({ outcome: "ok"|"FAIL"|"skip", name, detail }).
 */
export function runMuslCore(arch) {
  const target = MUSL_TARGETS[arch];
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), "exactspawn-musl-core-"));
  try {
    const binary = join(dir, "musl-core");
    const core = join(root, "native/core");
    const build = spawnSync(
      toolchainBin("zig"),
      [
        "c++",
        "-target",
        target.zig,
        "-static",
        "-std=c++17",
        "-O2",
        "-Wall",
        "-Wextra",
        "-include",
        join(core, "glibc_floor.h"),
        `-I${core}`,
        "-o",
        binary,
        join(root, "test/fixtures/musl-core.cc"),
        join(root, "test/fixtures/musl-core-children.cc"),
        ...CORE.map((name) => join(core, `${name}.cc`)),
      ],
      {
        encoding: "utf8",
        maxBuffer: 1 << 24,
        env: zigEnv(dir),
      },
    );
    if (build.status !== 0) {
      const why = (build.stderr || String(build.error ?? "")).trim().split("\n").slice(-5);
      return { ok: false, build: `zig c++ failed: ${why.join(" / ")}`, checks: [], output: "" };
    }
    const command = target.qemu ? ["qemu-aarch64", binary, "--qemu"] : [binary];
    const run = spawnSync(command[0], command.slice(1), {
      encoding: "utf8",
      cwd: dir,
      timeout: 300_000,
    });
    let output = `${run.stdout ?? ""}${run.stderr ?? ""}`;
    const checks = (run.stdout ?? "")
      .split("\n")
      .map((line) => line.match(/^(ok|FAIL|skip) ([^:]+): (.*)$/))
      .filter(Boolean)
      .map(([, outcome, name, detail]) => ({ outcome, name, detail }));
    const load = loadPrebuild(arch, dir);
    output += `${load.outcome} ${load.name}: ${load.detail}\n`;
    checks.push(load);
    const ok = run.status === 0 && checks.length > 0 && checks.every((c) => c.outcome !== "FAIL");
    const exit = run.status === 0 ? undefined : `exit ${run.status ?? run.signal}`;
    const prebuild = join(root, `prebuilds/linux-${arch}/exactspawn.musl.node`);
    return { ok, exit, checks, output, prebuild, seconds: (Date.now() - started) / 1000 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One result cell for the matrix: pass (n/m checks) and the skips, or what failed. */
export function muslCoreSummary(result) {
  if (result.build) return `FAIL: ${result.build}`;
  const skipped = result.checks.filter((c) => c.outcome === "skip");
  const failed = result.checks.filter((c) => c.outcome === "FAIL");
  const passed = result.checks.filter((c) => c.outcome === "ok").length;
  const counted = `${passed}/${result.checks.length} checks`;
  if (!result.ok) {
    const what = failed.map((c) => `${c.name}: ${c.detail}`).join("; ");
    return `FAIL (${counted}): ${what || result.exit || "no checks ran"}`;
  }
  const skips = skipped.map((c) => `${c.name} (${c.detail})`).join("; ");
  return `pass (${counted}, ${result.seconds.toFixed(1)} s)${skips ? `; skipped: ${skips}` : ""}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const only = args.includes("--only") ? args[args.indexOf("--only") + 1].split(",") : undefined;
  let failed = false;
  for (const arch of only ?? Object.keys(MUSL_TARGETS)) {
    if (!(arch in MUSL_TARGETS)) {
      console.error(`musl-core: unknown target ${arch} (known: x64, arm64)`);
      process.exit(2);
    }
    const { platform } = MUSL_TARGETS[arch];
    const missing = muslCoreMissing(arch);
    if (missing) {
      console.log(`${platform}: skipped: ${missing}`);
      continue;
    }
    const result = runMuslCore(arch);
    console.log(`== ${platform}`);
    if (result.output) process.stdout.write(result.output);
    console.log(`${platform}: ${muslCoreSummary(result)}`);
    failed ||= !result.ok;
  }
  process.exit(failed ? 1 : 0);
}
