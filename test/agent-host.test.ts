/**
 * docs/agent-host.md's example, executed as the README's are
 * (test/readme.test.ts): run with `node --input-type=module` from the
 * package root, it must print exactly its `// =>` lines, write nothing to
 * stderr, and leave nothing behind (its own teardown removes its directory).
 * The sandbox needs the native engine: the fallback project skips it.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../src/native.js";
import { expectedOutput, fencedBlocks } from "./helpers/doc-blocks.js";

const PAGE = readFileSync(join(PACKAGE_ROOT, "docs", "agent-host.md"), "utf8");
const jsBlocks = fencedBlocks(PAGE).filter((b) => b.lang === "js");
const native = process.env["EXACTSPAWN_NATIVE"] !== "0";

describe("docs/agent-host.md", () => {
  it("has one end-to-end host", () => {
    expect(jsBlocks).toHaveLength(1);
    expect(PAGE).toMatch(/concurrency|16 steps in flight/);
  });

  for (const block of jsBlocks) {
    it.runIf(native)(`js (line ${block.line}) prints what its // => comments say`, () => {
      const leftBefore = readdirSync(tmpdir()).filter((n) => n.startsWith("agent-host-"));
      const run = spawnSync(process.execPath, ["--input-type=module"], {
        cwd: PACKAGE_ROOT,
        encoding: "utf8",
        input: block.code,
        env: { ...process.env, GITHUB_TOKEN: "host-token-never-passed" },
      });
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      expect(run.stdout.trimEnd().split("\n")).toEqual(expectedOutput(block.code));
      const leftAfter = readdirSync(tmpdir()).filter((n) => n.startsWith("agent-host-"));
      expect(leftAfter).toEqual(leftBefore);
    });
  }
});
