#!/usr/bin/env node
// npm run test:install — the packed tarball installed into empty projects
// exactly as npm installs a dependency (npm 11: a dependency's install
// script runs with a notice until approved, or not at all where the user's
// npm blocks it or was told to ignore scripts), so nothing may depend on it:
//   - the tarball carries no source map that points at a file it does not ship;
//   - without prebuild, on a host without a toolchain (a PATH with node, npm
//     and sh only: no make, no compiler, no python), with default settings and
//     with scripts not run: the install exits 0; spawn and spawnSync work on
//     the fallback, and one warning at first use says why and names the
//     command that builds the addon (`npm rebuild exactspawn`);
//     EXACTSPAWN_NATIVE=required refuses to run without the addon;
//   - that command runs the install script, which says in one line what is
//     missing and that the fallback is in use;
//   - the untouched tarball loads its prebuild, with or without its script.
//   - without prebuild, with a toolchain that cannot link a static program (no
//     libc.a), on a terminal: the install says before the build what it builds
//     and why, and after it how long it took and that the exec helper was left
//     out; the addon loads, plain spawns are native, a uid step and
//     `exactspawn sandbox` name the helper and why;
//   - the untouched tarball keeps each exec helper at mode 0755 (tar's listing)
//     and runs its helper from its own file.
// Uses the npm cache (--prefer-offline): run after `npm ci`.
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const scratch = mkdtempSync(join(tmpdir(), "exactspawn-test-install-"));
let failed = 0;
const check = (ok, what, detail = "") => {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) {
    failed++;
    if (detail) console.log(detail.replace(/^/gm, "     | "));
  }
};
/** Each source map (`*.js.map`, `*.d.ts.map`) under dir whose sources name a file that is not there (as "map -> source"). */
function danglingMaps(dir) {
  const broken = [];
  for (const entry of readdirSync(dir, { recursive: true })) {
    if (!/\.[cm]?[jt]s\.map$/.test(String(entry))) continue; // not native/exports.map (a linker script)
    const map = join(dir, String(entry));
    const { sources = [], sourceRoot = "" } = JSON.parse(readFileSync(map, "utf8"));
    for (const source of sources) {
      const path = resolve(dirname(map), sourceRoot, source);
      if (!existsSync(path)) broken.push(`${String(entry)} -> ${source}`);
    }
  }
  return broken;
}
const which = (name) =>
  spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).stdout.trim();

try {
  const packed = spawnSync("npm", ["pack", "--silent", "--pack-destination", scratch], {
    cwd: root,
    encoding: "utf8",
  });
  if (packed.status !== 0) throw new Error(`npm pack failed: ${packed.stderr}`);
  const tarball = join(scratch, packed.stdout.trim().split("\n").pop());
  const stripped = join(scratch, "stripped.tgz");
  const unpacked = join(scratch, "unpacked");
  mkdirSync(unpacked);
  spawnSync("tar", ["xzf", tarball, "-C", unpacked], { stdio: "inherit" });
  // tar -tv: "-rwxr-xr-x 0/0 600296 … package/prebuilds/linux-x64/exactspawn-helper".
  const listing = spawnSync("tar", ["tzvf", tarball], { encoding: "utf8" }).stdout;
  const helpers = listing.split("\n").filter((l) => /\/exactspawn-helper$/.test(l));
  check(
    helpers.length > 0 && helpers.every((l) => l.startsWith("-rwxr-xr-x")),
    `the tarball's exec helpers keep mode 0755 (${helpers.length})`,
    listing,
  );
  const broken = danglingMaps(join(unpacked, "package"));
  check(
    broken.length === 0,
    "no source map points at a file the package does not ship",
    broken.join("\n"),
  );
  rmSync(join(unpacked, "package/prebuilds"), { recursive: true, force: true });
  spawnSync("tar", ["czf", stripped, "-C", unpacked, "package"], { stdio: "inherit" });

  // node, npm and sh only: no make, no compiler, no python.
  const bin = join(scratch, "bin");
  mkdirSync(bin);
  symlinkSync(process.execPath, join(bin, "node"));
  symlinkSync(realpathSync(which("npm")), join(bin, "npm"));
  symlinkSync("/bin/sh", join(bin, "sh"));
  const env = { ...process.env, PATH: bin, EXACTSPAWN_NATIVE: "", EXACTSPAWN_LOG_LEVEL: "" };
  delete env.EXACTSPAWN_NATIVE;
  delete env.EXACTSPAWN_LOG_LEVEL;
  delete env.CXX;

  const install = (name, file, flags = []) => {
    const project = join(scratch, name);
    mkdirSync(project);
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name, private: true, type: "module" }),
    );
    const started = Date.now();
    const run = spawnSync(
      "npm",
      ["install", "--prefer-offline", "--no-audit", "--no-fund", ...flags, file],
      { cwd: project, encoding: "utf8", env },
    );
    console.log(`     npm install (${name}): exit ${run.status}, ${Date.now() - started} ms`);
    return { project, run };
  };
  const node = (project, code, extra = {}) =>
    spawnSync(process.execPath, ["--input-type=module", "-e", code], {
      cwd: project,
      encoding: "utf8",
      env: { ...env, ...extra },
    });

  const onFallback = (label, project) => {
    const use = node(
      project,
      `import { spawn, spawnSync, nativeStatus } from "exactspawn";
       const a = await spawn("/bin/echo", ["async"]);
       const s = spawnSync("/bin/echo", ["sync"]);
       console.log(JSON.stringify({ a: a.stdout, s: s.stdout, status: nativeStatus() }));`,
    );
    let report;
    try {
      report = JSON.parse(use.stdout);
    } catch {}
    check(
      use.status === 0 && report?.a.trim() === "async" && report?.s.trim() === "sync",
      `${label}: spawn and spawnSync work on the fallback`,
      `${use.stdout}${use.stderr}`,
    );
    check(report?.status?.loaded === false, `${label}: nativeStatus(): ${report?.status?.reason}`);
    const warnings = use.stderr.split("\n").filter((l) => /fallback/.test(l));
    check(
      warnings.length === 1 && warnings[0].includes("npm rebuild exactspawn"),
      `${label}: one warning at first use says the fallback is in use and names npm rebuild exactspawn`,
      use.stderr,
    );
    const required = node(
      project,
      `import { spawn } from "exactspawn"; await spawn("/bin/true");`,
      {
        EXACTSPAWN_NATIVE: "required",
      },
    );
    check(
      required.status !== 0 && /could not load the native addon/.test(required.stderr),
      `${label}: EXACTSPAWN_NATIVE=required refuses to run without the addon`,
      required.stderr,
    );
  };

  for (const [label, flags] of [
    ["default settings", []],
    ["scripts not run", ["--ignore-scripts"]],
  ]) {
    const bare = install(`no-prebuild-${flags.length}`, stripped, flags);
    const out = `${bare.run.stdout}${bare.run.stderr}`;
    check(bare.run.status === 0, `${label}: installs without prebuild and toolchain (exit 0)`, out);
    onFallback(label, bare.project);
    if (flags.length === 0) continue;
    // What the first-use warning tells the user to run: the install script runs now.
    const rebuild = spawnSync("npm", ["rebuild", "--foreground-scripts", "exactspawn"], {
      cwd: bare.project,
      encoding: "utf8",
      env,
    });
    const said = `${rebuild.stdout}${rebuild.stderr}`;
    const lines = said.split("\n").filter((l) => l.startsWith("exactspawn: "));
    check(
      rebuild.status === 0 &&
        lines.length === 1 &&
        /fallback/.test(lines[0]) &&
        /make/.test(lines[0]),
      "npm rebuild exactspawn runs the install script: one line says what is missing and that the fallback is in use",
      said,
    );
    if (lines[0]) console.log(`     ${lines[0]}`);
  }

  // A source build where the toolchain cannot link a static program (no
  // libc.a: Fedora/RHEL without glibc-static), simulated by a g++ that fails
  // a -static link as ld does there; the rest of the toolchain is the real one.
  // Run on a terminal (script(1)) the way a user runs npm install, whose
  // transcript is what the user sees.
  {
    const nostatic = join(scratch, "nostatic");
    mkdirSync(nostatic);
    writeFileSync(
      join(nostatic, "g++"),
      `#!/bin/sh
for arg in "$@"; do
  if [ "$arg" = "-static" ]; then
    echo "/usr/bin/ld: cannot find -lc: No such file or directory" >&2
    echo "collect2: error: ld returned 1 exit status" >&2
    exit 1
  fi
done
exec ${which("g++")} "$@"
`,
      { mode: 0o755 },
    );
    const built = { ...env, PATH: `${nostatic}:${process.env.PATH}` };
    const project = join(scratch, "source-build");
    mkdirSync(project);
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: "source-build", private: true, type: "module" }),
    );
    const command = `npm install --prefer-offline --no-audit --no-fund ${stripped}`;
    const started = Date.now();
    const run = spawnSync("script", ["-qec", command, "/dev/null"], {
      cwd: project,
      encoding: "utf8",
      env: built,
    });
    const seen = run.stdout.replace(/\r/g, "");
    console.log(`     npm install (source build): exit ${run.status}, ${Date.now() - started} ms`);
    // What the terminal shows of each line: after its last cursor move and line clear.
    const lines = seen
      .split("\n")
      .map((l) => l.split(/\x1b\[(?:1G|0?K)/).pop() ?? "")
      .filter((l) => l.startsWith("exactspawn: "));
    for (const line of lines) console.log(`     | ${line}`);
    check(
      run.status === 0 && /building it from source/.test(lines[0] ?? ""),
      "a source build says on the terminal what it builds and why, before it starts",
      seen,
    );
    check(
      lines.some((l) => /built from source in \d+ s/.test(l)) &&
        lines.some((l) => /without its exec helper .*static/.test(l)),
      "and, when done, how long it took and that the exec helper was left out (no static libc)",
      seen,
    );
    const use = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { spawn, nativeStatus } from "exactspawn";
        const status = nativeStatus();
        const plain = await spawn("/bin/echo", ["native"]);
        let step;
        try { await spawn("/bin/true", [], { uid: process.getuid(), gid: process.getgid() }); }
        catch (e) { step = { step: e.step, code: e.code, message: e.message }; }
        console.log(JSON.stringify({ loaded: status.loaded, helper: status.helper, plain: plain.stdout, step }));`,
      ],
      { cwd: project, encoding: "utf8", env: built },
    );
    let report;
    try {
      report = JSON.parse(use.stdout);
    } catch {}
    check(
      report?.loaded === true && report.plain === "native\n" && use.stderr === "",
      "the addon built without the helper loads, and plain spawns run on the native engine",
      `${use.stdout}${use.stderr}`,
    );
    check(
      report?.helper?.run === "unavailable" && /static/.test(report.helper.reason ?? ""),
      `nativeStatus().helper: ${report?.helper?.run}: ${report?.helper?.reason}`,
      use.stdout,
    );
    check(
      report?.step?.step === "helper" &&
        report.step.code === "ENOENT" &&
        /glibc-static/.test(report.step.message),
      `a uid step fails naming the helper and why: ${report?.step?.message}`,
      use.stdout,
    );
    const cli = spawnSync(
      process.execPath,
      [join(project, "node_modules/exactspawn/dist/cli.js"), "sandbox"],
      { cwd: project, encoding: "utf8", env: built },
    );
    const row = cli.stdout.split("\n").find((l) => l.startsWith("exec helper"));
    check(
      cli.status === 1 && /cannot run: .*glibc-static/.test(row ?? ""),
      `exactspawn sandbox: ${row}`,
      `${cli.stdout}${cli.stderr}`,
    );
  }

  for (const [label, flags] of [
    ["default settings", []],
    ["scripts not run", ["--ignore-scripts"]],
  ]) {
    const full = install(`with-prebuild-${flags.length}`, tarball, flags);
    check(
      full.run.status === 0,
      `${label}: the untouched tarball installs`,
      `${full.run.stdout}${full.run.stderr}`,
    );
    const loaded = node(
      full.project,
      `import { nativeStatus } from "exactspawn"; console.log(JSON.stringify(nativeStatus()));`,
    );
    check(
      /"loaded":true/.test(loaded.stdout) && loaded.stderr === "",
      `${label}: and loads its prebuild, silently`,
      `${loaded.stdout}${loaded.stderr}`,
    );
    check(
      /"run":"file"/.test(loaded.stdout),
      `${label}: and runs its exec helper from its own file`,
      `${loaded.stdout}${loaded.stderr}`,
    );
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
console.log(failed === 0 ? "test:install passed" : `test:install: ${failed} check(s) failed`);
process.exit(failed === 0 ? 0 : 1);
