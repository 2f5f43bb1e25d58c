/**
 * Runs one fault scenario in a Node process of its own: the "host". A host is
 * special (a low fd limit, another user, a worker to terminate) or must be
 * measured alone, so its fds, pidfds and zombies are counted inside it, not in
 * the test runner. The host imports the compiled library (dist/, built by
 * `npm run compile` / `npx tsc -p tsconfig.build.json`) and inherits
 * EXACTSPAWN_NATIVE, so each vitest project runs it on its own engine.
 *
 * The source may use DIST (the library's URL) and the helpers in PRELUDE:
 * `fds()`, `pidfds()`, `zombies()`, `report(value)` (one JSON line on stdout).
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const root = resolve(import.meta.dirname, "../..");
export const DIST_URL = pathToFileURL(join(root, "dist/index.js")).href;

const PROC_STATE_URL = pathToFileURL(join(root, "scripts/proc-state.mjs")).href;

const PRELUDE = `
import { openFdCount as fds, pidfdCount as pidfds, zombieChildren as __zombieChildren } from ${JSON.stringify(PROC_STATE_URL)};
const zombies = () => __zombieChildren().length;
const settle = async (check, ms = 20000) => {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return check();
};
const report = (value) => console.log("REPORT " + JSON.stringify(value));
`;

export interface HostRun<T> {
  status: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  report: T | undefined;
}

/** A scratch directory any user can enter (for hosts run as `nobody`). */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  return dir;
}

/**
 * Writes `source` to a file in `dir` and runs it with Node, optionally behind
 * `wrap` (e.g. ["bash", "-c", 'ulimit -n 40; exec "$0" "$@"']).
 */
export function runHost<T>(
  dir: string,
  source: string,
  options: { wrap?: string[]; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): HostRun<T> {
  const file = join(dir, `host-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, PRELUDE + source.replaceAll("DIST", JSON.stringify(DIST_URL)), {
    mode: 0o644,
  });
  const [command, ...args] = [...(options.wrap ?? []), process.execPath, file];
  const run = spawnSync(command!, args, {
    encoding: "utf8",
    timeout: options.timeoutMs ?? 120_000,
    env: { ...process.env, ...options.env },
    maxBuffer: 16 * 1024 * 1024,
  });
  const line = run.stdout
    .split("\n")
    .reverse()
    .find((l) => l.startsWith("REPORT "));
  return {
    status: run.status,
    signal: run.signal,
    stdout: run.stdout,
    stderr: run.stderr,
    report: line === undefined ? undefined : (JSON.parse(line.slice(7)) as T),
  };
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
