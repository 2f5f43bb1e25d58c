/**
 * Error codes are API: hosts match on them. Every code the source throws is
 * ERR_EXACTSPAWN_ plus upper-case words (a careless rename once turned two of
 * them into ERR___exactspawn_spill_*, with the tests renamed alongside), and
 * the codes the docs name and the codes the source throws are the same set.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");

function files(dir: string, ext: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(ext))
    .map((name) => join(root, dir, name));
}

function codes(paths: readonly string[], pattern: RegExp): Set<string> {
  const out = new Set<string>();
  for (const path of paths)
    for (const match of readFileSync(path, "utf8").matchAll(pattern)) {
      out.add((match[1] ?? match[2])!);
    }
  return out;
}

// Node's own parseArgs codes are matched by prefix in the CLI; they are not ours.
const thrown = [...codes(files("src", ".ts"), /"(ERR_[A-Za-z0-9_]+)"/g)].filter(
  (code) => !code.startsWith("ERR_PARSE_ARGS"),
);
const documented = codes(
  [...files("docs", ".md"), join(root, "README.md")],
  /`(ERR_[A-Za-z0-9_]+)`|"(ERR_[A-Za-z0-9_]+)"/g,
);

describe("error codes", () => {
  it("are ERR_EXACTSPAWN_ and upper-case words", () => {
    expect(thrown.length).toBeGreaterThan(5);
    for (const code of thrown) expect(code).toMatch(/^ERR_EXACTSPAWN_[A-Z0-9]+(?:_[A-Z0-9]+)*$/);
  });

  it("the docs name exactly the codes the source throws", () => {
    const ours = [...documented].filter((code) => code.startsWith("ERR_EXACTSPAWN"));
    expect(new Set(ours)).toEqual(new Set(thrown));
  });
});
