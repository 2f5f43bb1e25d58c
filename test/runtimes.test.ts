/**
 * The same addon under every runtime that implements Node-API: the core
 * behaviours script (test/fixtures/core-behaviours.mjs: load, spawn,
 * spawnSync, streamed output, a spilled 300 KB bash value, a sandboxed step,
 * an unref'd child, a clean exit) runs to exit 0 under Node, and under Bun and
 * Deno when they are found ($BUN / $DENO, else `bun` / `deno` on PATH, else
 * the pinned build the platform matrix already fetched into the toolchain
 * cache; nothing is fetched here). A runtime that is not found is skipped
 * with the reason. The script runs the compiled
 * dist/ (kept current by test/global-setup.ts).
 *
 * Node's children are watched by its own event loop, every other runtime's
 * by the addon's thread (src/exit-watch-mode.ts); Node runs once more with
 * EXACTSPAWN_EXIT_WATCH=thread, so both ways run here.
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { CACHE, TOOLCHAINS } from "../scripts/toolchains.mjs";
import { nativeStatus } from "../src/index.js";

const root = resolve(import.meta.dirname, "..");
const script = join(root, "test/fixtures/core-behaviours.mjs");

/** The pinned toolchain `key` when it is already in the cache (checked as the matrix checks it). */
function cachedToolchain(key: "bun" | "deno"): string | undefined {
  const tool = TOOLCHAINS[key];
  const dir = join(CACHE, `${key}-${tool.version}`);
  const marker = join(dir, ".integrity");
  if (!existsSync(marker) || readFileSync(marker, "utf8") !== tool.integrity) return undefined;
  return join(dir, "package", tool.bin);
}

/** The runtime's executable: $VARIABLE when set, else `name` on PATH, else the cached pinned build. */
function findRuntime(variable: string, name: "bun" | "deno"): string | undefined {
  const given = process.env[variable];
  if (given !== undefined && given !== "") return given;
  for (const dir of (process.env["PATH"] ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return cachedToolchain(name);
}

interface Runtime {
  name: string;
  variable: string;
  command: string | undefined;
  args: string[];
  env?: Record<string, string>;
  exitWatch: "host-loop" | "thread";
}

const runtimes: Runtime[] = [
  { name: "node", variable: "", command: process.execPath, args: [], exitWatch: "host-loop" },
  {
    name: "node with EXACTSPAWN_EXIT_WATCH=thread",
    variable: "",
    command: process.execPath,
    args: [],
    env: { EXACTSPAWN_EXIT_WATCH: "thread" },
    exitWatch: "thread",
  },
  {
    name: "bun",
    variable: "BUN",
    command: findRuntime("BUN", "bun"),
    args: [],
    exitWatch: "thread",
  },
  {
    name: "deno",
    variable: "DENO",
    command: findRuntime("DENO", "deno"),
    args: ["run", "-A"],
    exitWatch: "thread",
  },
];

describe.runIf(nativeStatus().loaded)("the core behaviours on each runtime", () => {
  for (const runtime of runtimes) {
    const reason = `${runtime.name} not found ($${runtime.variable} unset and no ${runtime.name} on PATH)`;
    if (runtime.command === undefined) console.warn(`runtimes.test: skipped: ${reason}`);
    it.skipIf(runtime.command === undefined)(`runs to exit 0 under ${runtime.name}`, () => {
      const run = spawnSync(runtime.command!, [...runtime.args, script], {
        cwd: root,
        encoding: "utf8",
        timeout: 60_000,
        env: { ...process.env, EXACTSPAWN_NATIVE: "required", NO_COLOR: "1", ...runtime.env },
      });
      const report = `${run.stdout}\n${run.stderr}`;
      expect(report).not.toMatch(/double free|Segmentation|panic|crash/i);
      expect(run.signal, report).toBeNull();
      expect(run.status, report).toBe(0);
      expect(run.stdout).toContain("core-behaviours: done");
      expect(run.stdout).toContain(`exit watch: ${runtime.exitWatch}`);
    });
  }
});
