// The C anchor shared by the benchmarks: bench/spawn_loop.c, compiled with
// cc into bench/.build on first use, and one run of it.
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

/** Compiles the C loop; returns the binary's path. */
export function buildAnchor() {
  const out = join(here, ".build");
  mkdirSync(out, { recursive: true });
  const binary = join(out, "spawn_loop");
  execFileSync("cc", ["-O2", "-Wall", "-o", binary, join(here, "spawn_loop.c")]);
  return binary;
}

/** One run of the C loop: [elapsed ns, its own CPU ns] (see spawn_loop.c for the arguments). */
export function runAnchor(binary, args) {
  return execFileSync(binary, args.map(String), { encoding: "utf8" }).trim().split(" ").map(Number);
}

/**
 * The Bun binary for the runtime-peer rows: $BUN, else `bun` on PATH; null
 * (the rows are skipped, with the reason printed) when there is none. The
 * npm package @oven/bun-linux-x64 (or -aarch64) carries one in package/bin.
 */
export function findBun() {
  const candidates = process.env.BUN ? [process.env.BUN] : ["bun"];
  for (const bun of candidates) {
    try {
      execFileSync(bun, ["--version"], { stdio: "ignore" });
      return bun;
    } catch {
      // not runnable: try the next one
    }
  }
  return null;
}

/** One run of bench/bun-anchor.mjs under Bun: [elapsed ns, its own CPU ns]. */
export function runBunAnchor(bun, args) {
  return execFileSync(bun, [join(here, "bun-anchor.mjs"), ...args.map(String)], {
    encoding: "utf8",
  })
    .trim()
    .split(" ")
    .map(Number);
}
