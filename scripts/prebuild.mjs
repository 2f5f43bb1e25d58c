#!/usr/bin/env node
// npm run prebuild [-- --only linux-x64-glibc[,linux-arm64-musl...]] [--check]
// (--check: only check the prebuilds that are there, build nothing)
//
// Builds the tagged prebuilds, named the way node-gyp-build and the library's
// own locator (src/native-locate.ts) select them:
//   prebuilds/linux-x64/exactspawn.glibc.node    g++ (node-gyp)
//   prebuilds/linux-arm64/exactspawn.glibc.node  aarch64-linux-gnu-g++ (node-gyp --arch=arm64;
//                                                Debian's crossbuild-essential-arm64)
//   prebuilds/linux-x64/exactspawn.musl.node     zig c++ -target x86_64-linux-musl
//   prebuilds/linux-arm64/exactspawn.musl.node   zig c++ -target aarch64-linux-musl
// (Zig 0.11 from the npm registry, pinned in scripts/toolchains.mjs; it links
// libc++ statically, so the musl builds need nothing but musl's libc.so.)
// Each is built in a scratch copy of the sources (build/ is left alone),
// stripped, then checked: ELF machine and C library as the locator reads them,
// the source stamp of native/ inside it, the symbol ceiling (objdump -T:
// nothing above GLIBC_2.28, GLIBCXX_3.4.21, CXXABI_1.3.9; musl builds need
// only libc.so, and every libc symbol they use is in musl's libc.so where this
// machine has one), and the x64 glibc one is loaded and its stamp read back.
// Writing the set removes the untagged prebuilds/<platform>/exactspawn.node
// of earlier releases. Beside each architecture's addons it writes the exec
// helper, prebuilds/linux-<arch>/exactspawn-helper (mode 0755): one static
// program per architecture serves glibc and musl hosts alike, built with
// zig c++ -target <arch>-linux-musl -static from the sources of binding.gyp's
// exactspawn-helper target (musl's static start is cheap where glibc's is not:
// every sandboxed, credential-changing or PID-namespace child execs it;
// docs/performance.md), stripped, then checked: ELF machine, statically linked
// (no dynamic section, no interpreter), mode 0755.
// Takes ~2 min for linux-x64-glibc alone; the first musl
// build also compiles musl and libc++ for Zig's cache (~8 min), kept in the
// toolchain cache for later runs.
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { nativeSourceStamp } from "./native-stamp.mjs";
import { CACHE, toolchainBin } from "./toolchains.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

export const TARGETS = {
  "linux-x64-glibc": { arch: "x64", libc: "glibc", gnu: "x86_64-linux-gnu" },
  "linux-arm64-glibc": { arch: "arm64", libc: "glibc", gnu: "aarch64-linux-gnu" },
  "linux-x64-musl": { arch: "x64", libc: "musl", zig: "x86_64-linux-musl" },
  "linux-arm64-musl": { arch: "arm64", libc: "musl", zig: "aarch64-linux-musl" },
};

/** Highest symbol version a glibc prebuild may need, per version prefix. */
const CEILINGS = { GLIBC: [2, 28], GLIBCXX: [3, 4, 21], CXXABI: [1, 3, 9] };

const args = process.argv.slice(2);
const onlyAt = args.indexOf("--only");
const only =
  onlyAt >= 0 ? (args[onlyAt + 1] ?? "").split(",").filter(Boolean) : Object.keys(TARGETS);
for (const name of only) {
  if (!(name in TARGETS)) {
    console.error(`prebuild: unknown target ${name} (known: ${Object.keys(TARGETS).join(", ")})`);
    process.exit(2);
  }
}

const run = (cmd, argv, options = {}) => {
  const result = spawnSync(cmd, argv, { stdio: "inherit", ...options });
  if (result.status !== 0) {
    throw new Error(`${cmd} ${argv.join(" ")} exited with ${result.status ?? result.signal}`);
  }
  return result;
};
const output = (cmd, argv) => {
  const result = spawnSync(cmd, argv, { encoding: "utf8", maxBuffer: 1 << 26 });
  if (result.status !== 0) throw new Error(`${cmd} ${argv.join(" ")}: ${result.stderr}`);
  return result.stdout;
};

/** The Node headers node-gyp builds against: npm's nodedir, else the system's, else a download. */
function nodedir() {
  if (process.env.npm_config_nodedir) return process.env.npm_config_nodedir;
  return existsSync("/usr/include/node/common.gypi") ? "/usr" : undefined;
}

/** A scratch copy of what node-gyp needs, so build/ in the tree is left alone. */
function scratchSources() {
  const dir = mkdtempSync(join(tmpdir(), "exactspawn-prebuild-"));
  for (const path of [
    "binding.gyp",
    "native",
    "scripts/native-stamp.mjs",
    "scripts/static-libc.mjs",
    "package.json",
  ]) {
    cpSync(join(root, path), join(dir, path), { recursive: true });
  }
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
  return dir;
}

/** Wrapper scripts that make `zig cc`/`zig c++` for one target look like a gcc pair to gyp's Makefile. */
function zigWrappers(dir, target) {
  const zig = toolchainBin("zig");
  const bin = join(dir, "zig-bin");
  mkdirSync(bin);
  for (const [name, mode] of [
    ["cc", "cc"],
    ["c++", "c++"],
  ]) {
    const file = join(bin, name);
    writeFileSync(file, `#!/bin/sh\nexec ${JSON.stringify(zig)} ${mode} -target ${target} "$@"\n`);
    chmodSync(file, 0o755);
  }
  return bin;
}

function build(name) {
  const target = TARGETS[name];
  const dir = scratchSources();
  const started = Date.now();
  try {
    const env = { ...process.env };
    const gypArgs = ["configure", `--arch=${target.arch}`];
    const headers = nodedir();
    if (headers) gypArgs.push(`--nodedir=${headers}`);
    if (target.zig) {
      const bin = zigWrappers(dir, target.zig);
      Object.assign(env, {
        CC: join(bin, "cc"),
        CXX: join(bin, "c++"),
        LINK: join(bin, "c++"),
        ZIG_GLOBAL_CACHE_DIR: join(CACHE, "zig-cache"),
        ZIG_LOCAL_CACHE_DIR: join(dir, "zig-local-cache"),
      });
    } else if (target.arch !== process.arch) {
      Object.assign(env, {
        CC: `${target.gnu}-gcc`,
        CXX: `${target.gnu}-g++`,
        LINK: `${target.gnu}-g++`,
      });
    }
    const gyp = createRequire(import.meta.url).resolve("node-gyp/bin/node-gyp.js");
    run(process.execPath, [gyp, ...gypArgs], { cwd: dir, env });
    // The addon only: the helper is built once per architecture (buildHelper).
    run("make", ["-C", "build", "BUILDTYPE=Release", "-j2", "exactspawn"], { cwd: dir, env });
    const out = join(root, "prebuilds", `linux-${target.arch}`, `exactspawn.${target.libc}.node`);
    mkdirSync(dirname(out), { recursive: true });
    copyFileSync(join(dir, "build/Release/exactspawn.node"), out);
    const strip =
      target.arch === process.arch ? "strip" : `${TARGETS[`linux-${target.arch}-glibc`].gnu}-strip`;
    run(strip, ["--strip-unneeded", out]);
    rmSync(join(dirname(out), "exactspawn.node"), { force: true });
    return { out, seconds: Math.round((Date.now() - started) / 1000) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The helper's sources, as binding.gyp's exactspawn-helper target lists them (one list). */
function helperSources() {
  const gyp = JSON.parse(readFileSync(join(root, "binding.gyp"), "utf8"));
  const helper = gyp.targets.find((t) => t.target_name === "exactspawn-helper");
  return helper.sources.map((source) => join(root, source));
}

/** Builds prebuilds/linux-<arch>/exactspawn-helper (static musl, stripped, 0755). */
function buildHelper(arch) {
  const gnu = TARGETS[`linux-${arch}-glibc`].gnu;
  const native = arch === process.arch;
  const out = join(root, "prebuilds", `linux-${arch}`, "exactspawn-helper");
  mkdirSync(dirname(out), { recursive: true });
  const started = Date.now();
  run(toolchainBin("zig"), [
    "c++",
    "-target",
    TARGETS[`linux-${arch}-musl`].zig,
    "-std=c++17",
    "-O2",
    "-Wall",
    "-Wextra",
    "-fno-exceptions",
    "-fno-rtti",
    "-ffunction-sections",
    "-fdata-sections",
    "-static",
    "-Wl,--gc-sections",
    "-o",
    out,
    ...helperSources(),
  ]);
  run(native ? "strip" : `${gnu}-strip`, [out]);
  chmodSync(out, 0o755);
  return { out, seconds: Math.round((Date.now() - started) / 1000) };
}

/** Every problem found with one architecture's helper (empty: it is good). */
async function checkHelper(arch, file) {
  const problems = [];
  const { elfFacts } = await import(join(root, "dist/native-locate.js"));
  const bytes = readFileSync(file);
  const facts = elfFacts(bytes);
  if (typeof facts === "string") problems.push(facts);
  else {
    if (facts.arch !== arch) problems.push(`ELF machine ${facts.arch}, not ${arch}`);
    if (facts.libc !== "none") problems.push(`linked against ${facts.libc}, not static`);
  }
  const headers = output("objdump", ["-p", file]);
  if (/\bINTERP\b|\bDYNAMIC\b|NEEDED/.test(headers)) problems.push("not statically linked");
  if ((statSync(file).mode & 0o777) !== 0o755) problems.push("mode is not 0755");
  return { problems, size: bytes.length };
}

function versionAbove(version, ceiling) {
  const parts = version.split(".").map(Number);
  for (let i = 0; i < Math.max(parts.length, ceiling.length); i++) {
    const a = parts[i] ?? 0;
    const b = ceiling[i] ?? 0;
    if (a !== b) return a > b;
  }
  return false;
}

/** Every problem found with one prebuild (empty: it is good). */
async function check(name, file) {
  const target = TARGETS[name];
  const problems = [];
  const { elfFacts } = await import(join(root, "dist/native-locate.js"));
  const facts = elfFacts(readFileSync(file));
  if (typeof facts === "string") problems.push(facts);
  else {
    if (facts.arch !== target.arch) problems.push(`ELF machine ${facts.arch}, not ${target.arch}`);
    if (facts.libc !== target.libc)
      problems.push(`linked against ${facts.libc}, not ${target.libc}`);
  }
  const stamp = nativeSourceStamp();
  if (!readFileSync(file).includes(Buffer.from(stamp)))
    problems.push(`source stamp ${stamp} not inside`);
  const symbols = output("objdump", ["-T", file]);
  const versions = new Set(symbols.match(/\b(GLIBC|GLIBCXX|CXXABI)_[0-9.]+\b/g) ?? []);
  const highest = {};
  for (const v of versions) {
    const [prefix, number] = v.split("_");
    if (target.libc === "musl") problems.push(`needs ${v} (a glibc symbol version)`);
    else if (versionAbove(number, CEILINGS[prefix])) problems.push(`needs ${v}`);
    if (!highest[prefix] || versionAbove(number, highest[prefix].split(".").map(Number))) {
      highest[prefix] = number;
    }
  }
  const needed = [...output("objdump", ["-p", file]).matchAll(/NEEDED\s+(\S+)/g)].map((m) => m[1]);
  const exported = output("nm", ["-D", "--defined-only", file])
    .split("\n")
    .filter(Boolean)
    .map((l) => l.trim().split(/\s+/).pop());
  for (const sym of exported) {
    if (!/^(napi_register_module_v1|node_api_module_get_api_version_v1)$/.test(sym)) {
      problems.push(`exports ${sym}`);
    }
  }
  if (target.libc === "musl" && needed.some((n) => n !== "libc.so")) {
    problems.push(`needs ${needed.join(", ")} (only libc.so expected)`);
  }
  // Where this machine has musl's libc.so for the target (Debian's musl package
  // for x86-64), every strong undefined symbol but the host's (napi_*, uv_*)
  // must be defined there: what loading on musl would check first.
  const muslLibc = `/lib/${target.arch === "x64" ? "x86_64" : "aarch64"}-linux-musl/libc.so`;
  if (target.libc === "musl" && existsSync(muslLibc)) {
    const defined = new Set(
      output("nm", ["-D", "--defined-only", muslLibc])
        .split("\n")
        .map((l) => l.trim().split(/\s+/).pop()),
    );
    const unresolved = output("nm", ["-D", "--undefined-only", file])
      .split("\n")
      .map((l) => l.trim().split(/\s+/))
      .filter(
        ([kind, sym]) => kind === "U" && !/^(napi_|node_api_|uv_)/.test(sym) && !defined.has(sym),
      )
      .map(([, sym]) => sym);
    if (unresolved.length > 0) problems.push(`not in ${muslLibc}: ${unresolved.join(", ")}`);
  }
  if (name === `linux-${process.arch}-glibc` && process.arch === target.arch) {
    const binding = createRequire(import.meta.url)(file);
    if (binding.sourceStamp !== stamp)
      problems.push(`loaded stamp ${binding.sourceStamp} != ${stamp}`);
  }
  const ceiling = Object.entries(highest)
    .map(([prefix, number]) => `${prefix}_${number}`)
    .join(" ");
  return {
    problems,
    summary: `needs ${needed.join(" ")}; highest ${ceiling || "(no versioned symbols)"}`,
  };
}

if (!existsSync(join(root, "dist/native-locate.js")))
  run("npm", ["run", "--silent", "compile"], { cwd: root });
const checkOnly = args.includes("--check");
let failed = false;
for (const name of only) {
  const target = TARGETS[name];
  const built = checkOnly
    ? {
        out: join(root, "prebuilds", `linux-${target.arch}`, `exactspawn.${target.libc}.node`),
        seconds: 0,
      }
    : build(name);
  const { out, seconds } = built;
  if (!existsSync(out)) {
    console.log(`prebuild MISSING: ${name} (${out.slice(root.length + 1)})`);
    failed = true;
    continue;
  }
  const { problems, summary } = await check(name, out);
  const size = readFileSync(out).length;
  console.log(
    `prebuild ${problems.length === 0 ? "ok" : "FAILED"}: ${name} → ${out.slice(root.length + 1)} ` +
      `(${checkOnly ? "checked only" : `${seconds} s`}, ${size} bytes; ${summary})`,
  );
  for (const problem of problems) console.log(`  - ${problem}`);
  failed ||= problems.length > 0;
}
for (const arch of new Set(only.map((name) => TARGETS[name].arch))) {
  const file = join(root, "prebuilds", `linux-${arch}`, "exactspawn-helper");
  const built = checkOnly ? { out: file, seconds: 0 } : buildHelper(arch);
  if (!existsSync(built.out)) {
    console.log(`prebuild MISSING: linux-${arch} helper (${file.slice(root.length + 1)})`);
    failed = true;
    continue;
  }
  const { problems, size } = await checkHelper(arch, built.out);
  console.log(
    `prebuild ${problems.length === 0 ? "ok" : "FAILED"}: linux-${arch} helper → ` +
      `${built.out.slice(root.length + 1)} (${checkOnly ? "checked only" : `${built.seconds} s`}, ` +
      `${size} bytes; static)`,
  );
  for (const problem of problems) console.log(`  - ${problem}`);
  failed ||= problems.length > 0;
}
process.exit(failed ? 1 : 0);
