/**
 * The kernel tier's mutants (scripts/kernels-mutants.mjs, run by
 * `npm run test:kernels -- --mutant NAME`) still point at code that exists,
 * and docs/platforms.md lists each: a row whose search text moved is caught
 * in every `npm test`, not only when a kernel is booted for it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { KERNEL_MUTANTS } from "../../scripts/kernels-mutants.mjs";

const root = join(import.meta.dirname, "../..");
const KERNELS = ["5.10", "6.1", "6.12"];

function count(text: string, search: string): number {
  let n = 0;
  for (let at = text.indexOf(search); at >= 0; at = text.indexOf(search, at + 1)) n++;
  return n;
}

describe("the kernel tier's mutants", () => {
  const rows = Object.entries(KERNEL_MUTANTS);

  it.each(rows)("%s: each search text occurs exactly once and changes something", (_name, row) => {
    expect(row.edits.length).toBeGreaterThan(0);
    for (const { file, search, replace } of row.edits) {
      expect(count(readFileSync(join(root, file), "utf8"), search), file).toBe(1);
      expect(replace).not.toBe(search);
    }
    expect(row.checks.length).toBeGreaterThan(0);
    expect(row.kernels.every((kernel) => KERNELS.includes(kernel))).toBe(true);
  });

  it("docs/platforms.md lists every one, and no other", () => {
    const text = readFileSync(join(root, "docs/platforms.md"), "utf8");
    const listed = [...text.matchAll(/^\| `([a-z0-9-]+)` \|.*\| (killed|survived[^|]*) \|$/gm)].map(
      (match) => match[1],
    );
    expect(listed.sort()).toEqual(rows.map(([name]) => name).sort());
  });
});
