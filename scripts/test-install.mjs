#!/usr/bin/env node
// npm run test:install — what a user on a platform without a prebuild sees
// (linux-arm64, musl, an old glibc) on a host without a toolchain (a slim
// image): packs the tarball, removes its prebuilds, installs it into a
// scratch project with a PATH that holds node, npm and sh but no make, no
// compiler, no python, then checks that
//   - the install exits 0 and says in one line that the fallback is in use,
//   - spawn and spawnSync work on the fallback, and one warning says why,
//   - EXACTSPAWN_NATIVE=required refuses to run without the addon.
// Then the untouched tarball keeps each exec helper at mode 0755 (tar's listing),
// installs, loads its prebuild and runs its helper from its own file.
// Uses the npm cache (--prefer-offline): run after `npm ci`.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
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

  const install = (name, file) => {
    const project = join(scratch, name);
    mkdirSync(project);
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name, private: true, type: "module" }),
    );
    const started = Date.now();
    const run = spawnSync(
      "npm",
      ["install", "--prefer-offline", "--foreground-scripts", "--no-audit", "--no-fund", file],
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

  const bare = install("no-prebuild", stripped);
  const out = `${bare.run.stdout}${bare.run.stderr}`;
  check(bare.run.status === 0, "installs without prebuild and toolchain (exit 0)", out);
  const lines = out.split("\n").filter((l) => l.startsWith("exactspawn: "));
  check(
    lines.length === 1 && /fallback/.test(lines[0]) && /make/.test(lines[0]),
    "says in one line what is missing and that the fallback is in use",
    out,
  );
  if (lines[0]) console.log(`     ${lines[0]}`);
  const use = node(
    bare.project,
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
    "spawn and spawnSync work on the fallback",
    `${use.stdout}${use.stderr}`,
  );
  check(report?.status?.loaded === false, `nativeStatus(): ${report?.status?.reason}`);
  const warnings = use.stderr.split("\n").filter((l) => /fallback/.test(l));
  check(warnings.length === 1, "one warning on stderr says the fallback is in use", use.stderr);
  const required = node(
    bare.project,
    `import { spawn } from "exactspawn"; await spawn("/bin/true");`,
    {
      EXACTSPAWN_NATIVE: "required",
    },
  );
  check(
    required.status !== 0 && /could not load the native addon/.test(required.stderr),
    "EXACTSPAWN_NATIVE=required refuses to run without the addon",
    required.stderr,
  );

  const full = install("with-prebuild", tarball);
  check(
    full.run.status === 0,
    "the untouched tarball installs",
    `${full.run.stdout}${full.run.stderr}`,
  );
  const loaded = node(
    full.project,
    `import { nativeStatus } from "exactspawn"; console.log(JSON.stringify(nativeStatus()));`,
  );
  check(
    /"loaded":true/.test(loaded.stdout),
    "and loads its prebuild",
    `${loaded.stdout}${loaded.stderr}`,
  );
  check(
    /"run":"file"/.test(loaded.stdout),
    "and runs its exec helper from its own file",
    `${loaded.stdout}${loaded.stderr}`,
  );
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
console.log(failed === 0 ? "test:install passed" : `test:install: ${failed} check(s) failed`);
process.exit(failed === 0 ? 0 : 1);
