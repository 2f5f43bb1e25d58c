/**
 * Runs one fault scenario in a Node process of its own: the "host". A host is
 * special (a low fd limit, another user, a worker to terminate) or must be
 * measured alone, so its fds, pidfds and zombies are counted inside it, not in
 * the test runner. The host imports the compiled library (dist/, built by
 * `npm run compile` / `npx tsc -p tsconfig.build.json`) and inherits
 * EXACTSPAWN_NATIVE, so each vitest project runs it on its own engine.
 *
 * A host run as another user (`nobody`) may not be able to read the checkout
 * (a clone inside a 0700 home): `privateLibrary(dir)` copies what it loads
 * into the scratch directory, readable by all, and runHost's `library` option
 * points the host at that copy.
 *
 * The source may use DIST (the library's URL) and the helpers in PRELUDE:
 * `fds()`, `pidfds()`, `zombies()`, `report(value)` (one JSON line on stdout).
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const root = resolve(import.meta.dirname, "../..");
export const DIST_URL = pathToFileURL(join(root, "dist/index.js")).href;

const PROC_STATE_URL = pathToFileURL(join(root, "scripts/proc-state.mjs")).href;

/** Where a host loads the library and the /proc counters from. */
export interface HostLibrary {
  distUrl: string;
  procStateUrl: string;
}

const prelude = (procStateUrl: string) => `
import { openFdCount as fds, pidfdCount as pidfds, zombieChildren as __zombieChildren } from ${JSON.stringify(procStateUrl)};
const zombies = () => __zombieChildren().length;
// Waits for a state with no event of its own (fds, pidfds, zombies); the cap
// is under runHost's 120 s so a leak is still reported, never a load limit.
const settle = async (check, ms = 90000) => {
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

/** Makes `path` and everything under it readable (and dirs enterable) by every user. */
function openToAll(path: string): void {
  const stat = statSync(path);
  chmodSync(path, stat.isDirectory() || (stat.mode & 0o111) !== 0 ? 0o755 : 0o644);
  if (stat.isDirectory()) for (const entry of readdirSync(path)) openToAll(join(path, entry));
}

/**
 * Copies what a host needs to load the library (dist/, package.json, the
 * addon build or prebuilds, the runtime dependencies, the /proc counters)
 * into `dir`/lib, readable by any user; removed with `dir`.
 */
export function privateLibrary(dir: string): HostLibrary {
  const lib = join(dir, "lib");
  const copy = (path: string) => {
    if (existsSync(join(root, path))) {
      cpSync(join(root, path), join(lib, path), { recursive: true, dereference: true });
    }
  };
  for (const path of [
    "dist",
    "package.json",
    "build/Release/exactspawn.node",
    "build/Release/exactspawn-helper",
    "prebuilds",
  ]) {
    copy(path);
  }
  copy("scripts/proc-state.mjs");
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
    packages: Record<string, { dev?: boolean }>;
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path.startsWith("node_modules/") && entry.dev !== true) copy(path);
  }
  openToAll(lib);
  return {
    distUrl: pathToFileURL(join(lib, "dist/index.js")).href,
    procStateUrl: pathToFileURL(join(lib, "scripts/proc-state.mjs")).href,
  };
}

/**
 * Writes `source` to a file in `dir` and runs it with Node, optionally behind
 * `wrap` (e.g. ["bash", "-c", 'ulimit -n 40; exec "$0" "$@"']).
 */
export function runHost<T>(
  dir: string,
  source: string,
  options: {
    wrap?: string[];
    env?: NodeJS.ProcessEnv;
    timeoutMs?: number;
    library?: HostLibrary;
  } = {},
): HostRun<T> {
  const library = options.library ?? { distUrl: DIST_URL, procStateUrl: PROC_STATE_URL };
  const file = join(dir, `host-${Math.random().toString(36).slice(2)}.mjs`);
  const text =
    prelude(library.procStateUrl) + source.replaceAll("DIST", JSON.stringify(library.distUrl));
  writeFileSync(file, text, { mode: 0o644 });
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
