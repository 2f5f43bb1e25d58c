/** Runs the compiled `exactspawn` command as a user would (node dist/cli.js …), without colour. */
import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../../src/native.js";

export function cli(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; input?: string; timeout?: number } = {},
): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, ["dist/cli.js", ...args], {
    cwd: PACKAGE_ROOT,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", ...options.env },
    maxBuffer: 64 * 1024 * 1024,
    ...(options.input === undefined ? {} : { input: options.input }),
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
  });
}

/** A private scratch directory with a write helper; remove() deletes it. */
export function scratch(): {
  dir: string;
  write(name: string, text: string): string;
  remove(): void;
} {
  const dir = mkdtempSync(join(tmpdir(), "exactspawn-cli-test-"));
  return {
    dir,
    write(name, text) {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
