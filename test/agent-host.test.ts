/**
 * docs/agent-host.md's example, executed as the README's are
 * (test/readme.test.ts): its types erased, run with `node --input-type=module`
 * from the package root (test/docs-examples.test.ts type-checks it), it must print exactly its `// =>` lines, write nothing to
 * stderr, and leave nothing behind (its own teardown removes its directory).
 * The sandbox needs the native engine: the fallback project skips it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../src/native.js";
import { examplesOf, runExample } from "./helpers/doc-blocks.js";

const PAGE = readFileSync(join(PACKAGE_ROOT, "docs", "agent-host.md"), "utf8");
const examples = examplesOf(PACKAGE_ROOT, "docs/agent-host.md");
const native = process.env["EXACTSPAWN_NATIVE"] !== "0";

describe("docs/agent-host.md", () => {
  it("has one end-to-end host", () => {
    expect(examples).toHaveLength(1);
    expect(PAGE).toMatch(/concurrency|16 steps in flight/);
  });

  for (const example of examples) {
    it.runIf(native)(`${example.where} prints what its // => comments say`, () => {
      const leftBefore = readdirSync(tmpdir()).filter((n) => n.startsWith("agent-host-"));
      const run = runExample(example, { GITHUB_TOKEN: "host-token-never-passed" });
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      expect(run.stdout.trimEnd().split("\n")).toEqual(example.expected);
      const leftAfter = readdirSync(tmpdir()).filter((n) => n.startsWith("agent-host-"));
      expect(leftAfter).toEqual(leftBefore);
    });
  }
});
