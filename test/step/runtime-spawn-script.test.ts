/**
 * runtime.spawn of a `#!` script near the exec limit, against the real
 * kernel: the trimming counts what the kernel's script loader adds, so an
 * environment that fits a binary but not the script is trimmed (one inherited
 * variable) and the script runs, instead of a SpawnError.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { SizedName } from "../../src/errors.js";
import { execFits, probeLimits } from "../../src/limits.js";
import { createRuntime } from "../../src/runtime.js";

const dir = mkdtempSync(join(tmpdir(), "exactspawn-rt-script-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FILL = 100_000;
const unbounded = { execLimit: Number.MAX_SAFE_INTEGER, maxArgStrlen: 131_072 };

/** A parent env whose layered env puts the script's plain footprint `below` bytes under the limit. */
function parentEnvFor(script: string, below: number): Record<string, string> {
  const limit = probeLimits().execLimit;
  const parent: Record<string, string> = { PATH: "/usr/bin:/bin", LAST: "" };
  const footprint = () =>
    execFits(
      script,
      [script],
      createRuntime({ inherit: "all", parentEnv: parent }).buildEnv().env,
      unbounded,
    ).footprint;
  for (let i = 0; footprint() + FILL + 20 < limit - below; i++) {
    parent[`FILL${String(i).padStart(4, "0")}`] = "f".repeat(FILL);
  }
  parent["LAST"] = "l".repeat(limit - below - footprint());
  expect(footprint()).toBe(limit - below);
  return parent;
}

describe("runtime.spawn of a #! script at the edge", () => {
  const script = join(dir, "step.sh");
  writeFileSync(script, "#!/bin/sh\nexit 0\n");
  chmodSync(script, 0o755);

  // "#!/bin/sh" with argv[0] = the path adds "/bin/sh\0": 8 bytes.
  it.each([
    [4, 1],
    [8, 0],
  ])(
    "with the plain image %i bytes under the limit, trims %i variable(s) and runs",
    async (below, trims) => {
      const runtime = createRuntime({ inherit: "all", parentEnv: parentEnvFor(script, below) });
      const trimmed: SizedName[] = [];
      const result = await runtime.spawn(script, [], { onTrim: (d) => trimmed.push(...d) });
      expect(result.exitCode).toBe(0);
      expect(trimmed).toHaveLength(trims);
    },
  );
});
