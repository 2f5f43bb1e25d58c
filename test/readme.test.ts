/**
 * README.md's examples, executed so they cannot drift. Every fenced block
 * tagged `sh` runs line by line in bash from the package root; every block
 * tagged `js` runs with `node --input-type=module` from the package root, so
 * `import … from "exactspawn"` resolves to this package (self-reference).
 * In a js block, a `// => text` comment is the exact line the statement
 * before it prints; in a sh block each command must exit 0.
 *
 * Two commands of the quick start are not re-run here: `npm ci` (the suite
 * runs on the installed tree) and `npm test` (it would run this suite again).
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../src/native.js";
import { expectedOutput, fencedBlocks } from "./helpers/doc-blocks.js";
import { LONG } from "./helpers/long.js";

const README = readFileSync(join(PACKAGE_ROOT, "README.md"), "utf8");
const blocks = fencedBlocks(README);
const shBlocks = blocks.filter((b) => b.lang === "sh");
const jsBlocks = blocks.filter((b) => b.lang === "js");

/** The quick-start line without the install step, or undefined for a line not re-run here. */
function runnable(command: string): string | undefined {
  if (command.trim() === "" || command.trim() === "npm test") return undefined;
  return command.replace(/^npm ci && /, "");
}

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  engines: { node: string };
};

describe("README.md", () => {
  it("has the quick start and examples to run", () => {
    expect(shBlocks.length).toBeGreaterThan(0);
    expect(jsBlocks.length).toBeGreaterThan(1);
    expect(README).toContain("## The exact kernel model");
    expect(shBlocks[0]!.code).toMatch(/^npm ci && npx exactspawn explain .*npx exactspawn run /m);
    expect(shBlocks[0]!.code).toMatch(/^npm test$/m);
  });

  it("is for a user on a first visit: install line, Node floor, no engineering figures up front", () => {
    expect(README).toContain("npm install exactspawn");
    // The floors the README names are the ones package.json's engines enforces
    // ("^20.19.0 || >=22.12.0": one per range).
    const floors = pkg.engines.node.split("||").map((range) => /(\d+\.\d+)\.0/.exec(range)?.[1]);
    expect(floors.length).toBeGreaterThan(0);
    for (const floor of floors) {
      expect(floor).toBeDefined();
      expect(README).toContain(`≥ ${floor}`);
    }
    expect(README).toMatch(/Node\.js ≥ \d/);
    const firstScreen = README.split("\n").slice(0, 40).join("\n");
    expect(firstScreen).not.toMatch(/µs|×|spawns\/s/);
    expect(firstScreen).toMatch(/```js\n/);
    // Other products are named in docs/migrating.md and docs/performance.md only.
    expect(README).not.toMatch(/\b(execa|nano-spawn|tinyexec|zx|Bun|Deno|amplihack|acpx)\b/);
    expect(README).toContain("(docs/performance.md)");
  });

  // The quick start is a newcomer's path (the committed prebuild loads): the
  // fallback project of `npm test` leaves it out (two npx starts, ~10 s), the
  // complete fallback pass of test:long runs it.
  const fallbackShort = process.env["EXACTSPAWN_NATIVE"] === "0" && !LONG;
  for (const block of shBlocks) {
    for (const command of block.code.split("\n").map(runnable)) {
      if (command === undefined) continue;
      it.skipIf(fallbackShort)(`sh (line ${block.line}): ${command.slice(0, 60)}`, () => {
        const run = spawnSync("bash", ["-c", command], {
          cwd: PACKAGE_ROOT,
          encoding: "utf8",
          env: { ...process.env, NO_COLOR: "1" },
        });
        expect(run.stderr).toBe("");
        expect(run.status).toBe(0);
        if (command.includes("report=@package-lock.json")) {
          // explain shows the spill; run prints the file's own SHA-256.
          expect(run.stdout).toMatch(/RECIPE_VAR_report\s+\w+\s+step/);
          expect(run.stdout).toMatch(/spilled/);
          const lock = readFileSync(join(PACKAGE_ROOT, "package-lock.json"));
          const sum = createHash("sha256").update(lock).digest("hex");
          expect(run.stdout.trimEnd().endsWith(`${sum}  -`)).toBe(true);
        }
      });
    }
  }

  for (const block of jsBlocks) {
    it(`js (line ${block.line}) prints what its // => comments say`, () => {
      const expected = expectedOutput(block.code);
      const run = spawnSync(process.execPath, ["--input-type=module"], {
        cwd: PACKAGE_ROOT,
        encoding: "utf8",
        input: block.code,
      });
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      expect(expected.length).toBeGreaterThan(0);
      expect(run.stdout.trimEnd().split("\n")).toEqual(expected);
    });
  }
});
