/**
 * Landlock alone (`readOnlyView: false`, what a host without the view gets)
 * refuses the two writes to an existing file outside `writable` that create
 * nothing: appending to it (the write-file right; creating, removing and
 * O_TRUNC are other rights, which sandbox.test.ts sees) and truncate(2) by
 * path (the truncate right, ABI 3). The file belongs to the child's own user
 * (root here, with no capability left), so only Landlock stands in the way.
 * Found by the mutation run of issue 27: with either right left unhandled the
 * rest of the suite stayed green.
 *
 * Seen red with `npm run test:mutants -- --only landlock-write-handled` and
 * `--only landlock-truncate-handled`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { nativeStatus, type SandboxOptions, sandboxSupport, spawn } from "../../src/index.js";
import { sandboxDirs } from "../helpers/sandbox-dirs.js";

const support = nativeStatus().loaded ? sandboxSupport() : undefined;
const full = support !== undefined && support.missing.length === 0;

const { inside, outside } = sandboxDirs("exactspawn-landlock-writes-", full);

const box: SandboxOptions = { writable: [inside], readOnlyView: false };

async function python(code: string, path: string) {
  const child = await spawn("/usr/bin/python3", ["-c", code, path], { sandbox: box });
  return String(child.stdout).trim();
}

// Prints 0, or the errno of the refusal.
const APPEND = [
  "import sys",
  "try:",
  "    with open(sys.argv[1], 'a') as f: f.write('appended')",
  "    print(0)",
  "except OSError as e:",
  "    print(e.errno)",
].join("\n");
const TRUNCATE = [
  "import os, sys",
  "try:",
  "    os.truncate(sys.argv[1], 0)",
  "    print(0)",
  "except OSError as e:",
  "    print(e.errno)",
].join("\n");

describe.runIf(full)("sandbox: Landlock refuses writes that create nothing", () => {
  it("appending to an existing file outside writable (EACCES); inside it works", async () => {
    const target = join(outside, "append");
    writeFileSync(target, "intact");
    expect(await python(APPEND, target)).toBe("13");
    expect(readFileSync(target, "utf8")).toBe("intact");
    const own = join(inside, "append");
    writeFileSync(own, "x");
    expect(await python(APPEND, own)).toBe("0"); // the oracle
    expect(readFileSync(own, "utf8")).toBe("xappended");
  });

  it("writing to /dev/null works though it is outside writable (the null devices are granted)", async () => {
    // stdio is set up before the sandbox, so only a write the command itself opens sees this rule.
    const child = await spawn("/bin/sh", ["-c", "echo x > /dev/null && echo ok"], { sandbox: box });
    expect(String(child.stdout).trim()).toBe("ok");
  });

  it("truncate(2) of a file outside writable by path (EACCES); inside it works", async () => {
    const target = join(outside, "truncate");
    writeFileSync(target, "intact");
    expect(await python(TRUNCATE, target)).toBe("13");
    expect(readFileSync(target, "utf8")).toBe("intact");
    const own = join(inside, "truncate");
    writeFileSync(own, "x");
    expect(await python(TRUNCATE, own)).toBe("0"); // the oracle
    expect(readFileSync(own, "utf8")).toBe("");
  });
});
