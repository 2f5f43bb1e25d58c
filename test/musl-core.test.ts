/**
 * The musl driver (scripts/musl-core.mjs) links a list of native/core/
 * files. A core file that one of them includes the header of must be in the
 * list too, or the static link fails (as it did when mount_view.cc arrived).
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { CORE } from "../scripts/musl-core.mjs";

const core = resolve(import.meta.dirname, "../native/core");

/** The core files whose headers `name` (.cc and .h) includes. */
function includedCoreFiles(name: string): string[] {
  const text = ["cc", "h"]
    .map((ext) => join(core, `${name}.${ext}`))
    .filter(existsSync)
    .map((file) => readFileSync(file, "utf8"))
    .join("\n");
  return [...text.matchAll(/#include "([a-z_]+)\.h"/g)]
    .map((match) => match[1]!)
    .filter((header) => header !== name && existsSync(join(core, `${header}.cc`)));
}

describe("the musl driver's list of core files", () => {
  it("holds every core file its files include, transitively", () => {
    const missing = new Set<string>();
    const seen = new Set<string>(CORE);
    const queue = [...CORE];
    while (queue.length > 0) {
      for (const needed of includedCoreFiles(queue.pop()!)) {
        if (seen.has(needed)) continue;
        seen.add(needed);
        missing.add(needed);
        queue.push(needed);
      }
    }
    expect([...missing]).toEqual([]);
  });
});
