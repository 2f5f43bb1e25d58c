#!/usr/bin/env node
import { spawnSync } from "node:child_process";
// Debian packages of another architecture that scripts take without
// installing them: each is pinned by version and by the sha256 of its .deb
// (the value in the signed Packages index of Debian's apt repository,
// recorded when it was pinned), fetched with `apt-get download` through the
// machine's own apt sources, checked, and unpacked with `dpkg-deb -x` into
// ~/.cache/exactspawn-toolchains/<key>-<version>/ (EXACTSPAWN_TOOLCHAINS
// overrides the directory). The system's package set and apt lists are left
// alone: the other architecture's index goes to a temporary apt state
// directory, removed afterwards. What was checked of their provenance:
// scripts/toolchains.md.
//
//   node scripts/debian-packages.mjs muslArm64   unpacks it and prints its directory
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CACHE } from "./toolchains.mjs";

/** key → package, architecture, version and the .deb's sha256. */
export const DEBIAN_PACKAGES = {
  muslArm64: {
    name: "musl",
    arch: "arm64",
    version: "1.2.3-1",
    sha256: "6ccf2bf0f479b00411cb8e1eeb048e648718170db5d63bbb4bf4a89350b81468",
  },
};

/** The apt-get options that keep the other architecture's index out of the system's state. */
function aptOptions(state, arch) {
  return [
    `Dir::State::Lists=${join(state, "lists")}`,
    `Dir::Cache=${join(state, "cache")}`,
    "Dir::State::status=/dev/null",
    `APT::Architecture=${arch}`,
    `APT::Architectures::=${arch}`,
    // The temporary directory is the caller's; apt's download sandbox user could not write it.
    ...(process.getuid?.() === 0 ? ["APT::Sandbox::User=root"] : []),
  ].flatMap((option) => ["-o", option]);
}

/**
 * The directory a pinned Debian package is unpacked into (its file tree from
 * `/`), fetching and checking it first if it is not cached. Throws an Error
 * naming the failing step when apt cannot fetch it or its hash is not the pinned one.
 */
export function debianPackageDir(key) {
  const pkg = DEBIAN_PACKAGES[key];
  if (pkg === undefined) throw new TypeError(`unknown Debian package ${key}`);
  const dir = join(CACHE, `${key}-${pkg.version}`);
  const marker = join(dir, ".sha256");
  if (existsSync(marker) && readFileSync(marker, "utf8") === pkg.sha256) return join(dir, "root");
  rmSync(dir, { recursive: true, force: true });
  const partial = `${dir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const state = mkdtempSync(join(tmpdir(), "exactspawn-apt-"));
  const spec = `${pkg.name}:${pkg.arch}=${pkg.version}`;
  try {
    for (const sub of ["lists/partial", "cache/archives/partial"]) {
      mkdirSync(join(state, sub), { recursive: true });
    }
    const options = aptOptions(state, pkg.arch);
    process.stderr.write(`debian-packages: fetching ${spec}\n`);
    // A source without this architecture fails the update but not the download below.
    const update = spawnSync("apt-get", [...options, "-qq", "update"], { encoding: "utf8" });
    if (update.error) throw new Error(`apt-get update: ${update.error.message}`);
    const download = spawnSync("apt-get", [...options, "-qq", "download", spec], {
      cwd: partial,
      encoding: "utf8",
    });
    const deb = readdirSync(partial).find((file) => file.endsWith(".deb"));
    if (download.status !== 0 || deb === undefined) {
      const why = `${update.stderr}${download.stderr}`.trim().split("\n").slice(-3).join(" / ");
      throw new Error(`apt-get download ${spec} failed: ${why || `exit ${download.status}`}`);
    }
    const file = join(partial, deb);
    const actual = createHash("sha256").update(readFileSync(file)).digest("hex");
    if (actual !== pkg.sha256) {
      throw new Error(`${spec}: .deb sha256 ${actual} is not the pinned ${pkg.sha256}`);
    }
    const unpack = spawnSync("dpkg-deb", ["-x", file, join(partial, "root")], { encoding: "utf8" });
    if (unpack.status !== 0) throw new Error(`dpkg-deb -x ${deb} failed: ${unpack.stderr.trim()}`);
    rmSync(file);
    writeFileSync(join(partial, ".sha256"), pkg.sha256);
    renameSync(partial, dir);
    return join(dir, "root");
  } finally {
    rmSync(state, { recursive: true, force: true });
    rmSync(partial, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const key of process.argv.slice(2)) console.log(`${key}\t${debianPackageDir(key)}`);
}
