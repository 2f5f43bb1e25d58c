/**
 * A link swapped in after TypeScript resolved the sandbox's paths does not
 * move a rule. resolveSandbox hands the addon real paths; a sandboxed step
 * running meanwhile can replace a directory on one of them by a symbolic
 * link before the next spawn opens it. The addon opens each path with
 * RESOLVE_NO_SYMLINKS twice: for the Landlock rule in the parent
 * (`landlock_add_rule`) and for the read-only view in the child (`openat2`);
 * either refuses the spawn with ELOOP naming the call. The swap is made
 * between resolveSandbox and the raw binding's spawnSync, each part of the
 * sandbox alone, so neither open hides the other (issue 27, item 9: no test
 * made a link appear after the TypeScript check).
 *
 * Seen red with `npm run test:mutants -- --only landlock-open-no-symlinks`
 * and `--only view-open-no-symlinks`: the spawn ran, the rule or the
 * writable mount following the link to the directory it names.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { nativeBinding, type RawSandbox } from "../../src/native.js";
import { normalizeSandbox, resolveSandbox, sandboxSupport } from "../../src/spawn/sandbox.js";
import { rawSandboxSpawn } from "../helpers/raw-sandbox-spawn.js";

const binding = nativeBinding();
const support = binding === null ? undefined : sandboxSupport();
const landlock = support !== undefined && !support.missing.includes("filesystem");
const view = support?.readOnlyView === true && process.getuid?.() === 0;

// Made only where a test runs (a skipped file runs no afterAll).
const base = landlock || view ? mkdtempSync(join(tmpdir(), "exactspawn-swap-")) : "/nonexistent";
afterAll(() => {
  if (landlock || view) rmSync(base, { recursive: true, force: true });
});

/** A sandbox resolved while `dir` is a directory, then `dir` replaced by a link to `elsewhere`. */
function resolvedThenSwapped(name: string): { raw: RawSandbox; dir: string } {
  const dir = join(base, name);
  const elsewhere = join(base, `${name}-elsewhere`);
  mkdirSync(dir);
  mkdirSync(elsewhere);
  const raw = resolveSandbox(normalizeSandbox("spawn", { writable: [dir] })!, support);
  expect(raw.write).toEqual([dir]); // the oracle: TypeScript resolved a real directory
  renameSync(dir, `${dir}-moved`);
  symlinkSync(elsewhere, dir);
  return { raw, dir };
}

/** The raw binding's spawnSync of /bin/true: the thrown error, or undefined when it ran. */
function runRaw(sandbox: RawSandbox): NodeJS.ErrnoException | undefined {
  try {
    rawSandboxSpawn(sandbox);
    return undefined;
  } catch (error) {
    return error as NodeJS.ErrnoException;
  }
}

describe("sandbox: a link swapped in after the paths were resolved", () => {
  it.runIf(landlock)("the Landlock rule refuses it (ELOOP, landlock_add_rule)", () => {
    const { raw, dir } = resolvedThenSwapped("rule");
    const error = runRaw({ ...raw, seccomp: false, readOnlyView: false, userNamespace: false });
    expect(error).toMatchObject({ code: "ELOOP", syscall: "landlock_add_rule", path: dir });
  });

  it.runIf(view)("the read-only view refuses it in the child (ELOOP, openat2)", () => {
    const { raw } = resolvedThenSwapped("view");
    const error = runRaw({
      ...raw,
      landlock: false,
      seccomp: false,
      readOnlyView: true,
      userNamespace: false,
    });
    expect(error).toMatchObject({ code: "ELOOP", syscall: "openat2", step: "sandbox" });
  });
});
