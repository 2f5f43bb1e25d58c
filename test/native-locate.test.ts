/**
 * Choosing the addon file: the ELF machine and the C library it links must be
 * this process's, whatever the file is called or where it lies.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../src/native.js";
import { elfFacts, hostLibc, locateAddon } from "../src/native-locate.js";

const shipped = (() => {
  const located = locateAddon(PACKAGE_ROOT);
  return located.path;
})();

/** The shipped addon with its ELF machine field changed to `machine`. */
function withMachine(machine: number): Buffer {
  const bytes = Buffer.from(readFileSync(shipped as string));
  bytes.writeUInt16LE(machine, 18);
  return bytes;
}

const dirs: string[] = [];
function packageWith(files: Record<string, Buffer>): string {
  const root = mkdtempSync(join(tmpdir(), "exactspawn-locate-"));
  dirs.push(root);
  for (const [path, bytes] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), bytes);
  }
  return root;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** locateAddon on a made-up package, whatever EXACTSPAWN_PREBUILD says (test:asan sets it). */
function locateIn(root: string): ReturnType<typeof locateAddon> {
  const saved = process.env["EXACTSPAWN_PREBUILD"];
  delete process.env["EXACTSPAWN_PREBUILD"];
  try {
    return locateAddon(root);
  } finally {
    if (saved !== undefined) process.env["EXACTSPAWN_PREBUILD"] = saved;
  }
}

const tagged = (libc: string) => `prebuilds/linux-${process.arch}/exactspawn.${libc}.node`;
const foreign = process.arch === "arm64" ? 62 : 183;
const foreignName = process.arch === "arm64" ? "x64" : "arm64";

describe("this process", () => {
  it("knows its C library", () => {
    const report = process.report.getReport() as { header?: { glibcVersionRuntime?: string } };
    expect(hostLibc()).toBe(report.header?.glibcVersionRuntime ? "glibc" : "musl");
  });
});

describe.runIf(shipped !== undefined)("reading an addon's ELF facts", () => {
  it("reads the architecture and C library of the addon in use", () => {
    expect(elfFacts(readFileSync(shipped as string))).toEqual({
      arch: process.arch,
      libc: hostLibc(),
    });
  });

  it("names a foreign machine and refuses what is not an ELF file", () => {
    expect(elfFacts(withMachine(foreign))).toMatchObject({ arch: foreignName });
    expect(elfFacts(Buffer.from("#!/bin/sh\n".padEnd(80)))).toBe("not an ELF file");
  });

  it("refuses a build/Release of another architecture and takes the prebuild", () => {
    const root = packageWith({
      "build/Release/exactspawn.node": withMachine(foreign),
      [tagged(hostLibc() ?? "glibc")]: readFileSync(shipped as string),
    });
    const located = locateIn(root);
    expect(located.path).toBe(join(root, tagged(hostLibc() ?? "glibc")));
    expect(located.refused).toEqual([
      `${join(root, "build/Release/exactspawn.node")}: built for ${foreignName}, not ${process.arch}`,
    ]);
  });

  it("refuses an untagged prebuild linked against the other C library, and says why", () => {
    const other = hostLibc() === "musl" ? "glibc" : "musl";
    const root = packageWith({
      [`prebuilds/linux-${process.arch}/exactspawn.node`]: readFileSync(shipped as string),
    });
    const located = locateAddon(root, other);
    expect(located.path).toBeUndefined();
    expect(located).toMatchObject({
      reason: expect.stringContaining(
        `linked against ${hostLibc()}, this process runs on ${other}`,
      ),
    });
  });

  it("never looks at build/ with PREBUILDS_ONLY set", () => {
    const root = packageWith({});
    mkdirSync(join(root, "build/Release"), { recursive: true });
    copyFileSync(shipped as string, join(root, "build/Release/exactspawn.node"));
    process.env["PREBUILDS_ONLY"] = "1";
    try {
      expect(locateIn(root)).toMatchObject({
        path: undefined,
        reason: expect.stringMatching(/^No native build was found for linux-/),
      });
    } finally {
      delete process.env["PREBUILDS_ONLY"];
    }
  });
});
