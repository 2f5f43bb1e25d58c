/**
 * scripts/debian-packages.mjs, without the network: a cached tree whose
 * marker holds the pinned sha256 is used as is (apt is not run); a stale one
 * is fetched again, and when apt cannot fetch it the error names the step and
 * apt's own reason and nothing is left behind. scripts/musl-core.mjs turns
 * that into a skip of the arm64 "load prebuild" check that says why, never a
 * silent one. apt-get is a stand-in script first on PATH.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

let work: string;
let cache: string;
let scratch: string;
let packages: typeof import("../scripts/debian-packages.mjs");
let muslCore: typeof import("../scripts/musl-core.mjs");

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "debian-packages-test-"));
  cache = join(work, "cache");
  scratch = join(work, "tmp");
  const bin = join(work, "bin");
  for (const dir of [cache, scratch, bin]) mkdirSync(dir);
  writeFileSync(
    join(bin, "apt-get"),
    '#!/bin/sh\necho "apt-get $*" >> "$APT_LOG"\necho "E: simulated: no repository reachable" >&2\nexit 100\n',
  );
  chmodSync(join(bin, "apt-get"), 0o755);
  vi.stubEnv("EXACTSPAWN_TOOLCHAINS", cache);
  vi.stubEnv("APT_LOG", join(work, "apt.log"));
  vi.stubEnv("PATH", `${bin}:${process.env["PATH"]}`);
  vi.stubEnv("TMPDIR", scratch);
  packages = await import("../scripts/debian-packages.mjs");
  muslCore = await import("../scripts/musl-core.mjs");
});

afterAll(() => {
  vi.unstubAllEnvs();
  rmSync(work, { recursive: true, force: true });
});

function aptCalls(): boolean {
  return existsSync(join(work, "apt.log"));
}

describe("debian-packages", () => {
  it("refuses an unknown key with a TypeError naming it", () => {
    expect(() => packages.debianPackageDir("nope")).toThrow(
      new TypeError("unknown Debian package nope"),
    );
  });

  it("uses a cached tree with the pinned sha256 without running apt", () => {
    const { version, sha256 } = packages.DEBIAN_PACKAGES["muslArm64"]!;
    const dir = join(cache, `muslArm64-${version}`);
    mkdirSync(join(dir, "root"), { recursive: true });
    writeFileSync(join(dir, ".sha256"), sha256);
    expect(packages.debianPackageDir("muslArm64")).toBe(join(dir, "root"));
    expect(aptCalls()).toBe(false);
  });

  it("fetches a stale tree again; apt's failure names the step and its reason, leaving nothing", () => {
    const { version } = packages.DEBIAN_PACKAGES["muslArm64"]!;
    writeFileSync(join(cache, `muslArm64-${version}`, ".sha256"), "stale");
    expect(() => packages.debianPackageDir("muslArm64")).toThrow(
      `apt-get download musl:arm64=${version} failed: `,
    );
    expect(() => packages.debianPackageDir("muslArm64")).toThrow(
      "E: simulated: no repository reachable",
    );
    expect(aptCalls()).toBe(true);
    expect(readdirSync(cache)).toEqual([]);
    expect(readdirSync(scratch)).toEqual([]);
  });

  it("makes the arm64 load check a skip that says why", () => {
    const dir = mkdtempSync(join(scratch, "load-"));
    try {
      const check = muslCore.loadPrebuild("arm64", dir);
      expect(check.outcome).toBe("skip");
      expect(check.name).toBe("load prebuild");
      expect(check.detail).toMatch(
        /^no aarch64 musl loader: apt-get download musl:arm64=\S+ failed: .*E: simulated: no repository reachable/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
