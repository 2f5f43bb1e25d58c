/**
 * A scratch directory with `inside` (for a sandbox's `writable`) and
 * `outside`, removed after the file's tests. Made only where the tests run:
 * a project that skips them all (the fallback) runs no afterAll, and the
 * directory would be left in TMPDIR; there the paths name nothing.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

export interface SandboxDirs {
  readonly base: string;
  readonly inside: string;
  readonly outside: string;
}

export function sandboxDirs(prefix: string, made: boolean): SandboxDirs {
  const base = made ? mkdtempSync(join(tmpdir(), prefix)) : "/nonexistent";
  const inside = join(base, "inside");
  const outside = join(base, "outside");
  if (made) {
    mkdirSync(inside);
    mkdirSync(outside);
  }
  afterAll(() => {
    if (made) rmSync(base, { recursive: true, force: true });
  });
  return { base, inside, outside };
}
