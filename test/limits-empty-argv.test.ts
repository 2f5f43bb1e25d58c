/**
 * An empty argv against the real kernel: Linux supplies "" as argv[0], which
 * takes one byte of the limit. An environment execFits fills to the byte
 * with argv [] execs; one byte more is E2BIG. The exec is made by a small C
 * fixture (Node cannot exec with argc 0) under `ulimit -s 1024`, reading the
 * environment from stdin so that its own exec stays small.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { execFits, execLimitForStack, MAX_ARG_STRLEN } from "../src/limits.js";
import { fixtureBinary } from "./fixtures/build.js";

const limits = { execLimit: execLimitForStack(1024 * 1024), maxArgStrlen: MAX_ARG_STRLEN };
const FILE = "/bin/true";

/** Exit 0: the exec worked; 100: E2BIG. */
function execWithEmptyArgv(env: Record<string, string>): number | null {
  const block = Object.entries(env)
    .map(([name, value]) => `${name}=${value}\0`)
    .join("");
  const run = spawnSync(
    "bash",
    ["-c", `ulimit -s 1024 && exec "$0" "$1"`, fixtureBinary("exec-argc0"), FILE],
    {
      input: block,
      env: {},
    },
  );
  return run.status;
}

describe("an empty argv (argc 0)", () => {
  const env: Record<string, string> = {};
  for (let i = 0; i < 2; i++) env[`FILL${i}`] = "f".repeat(100_000);
  env["LAST"] = "";
  const room = limits.execLimit - execFits(FILE, [], env, limits).footprint;
  env["LAST"] = "l".repeat(room);

  it('fills the limit exactly by the model, counting the kernel\'s "" argv[0]', () => {
    const fit = execFits(FILE, [], env, limits);
    expect(fit).toMatchObject({ fits: true, footprint: limits.execLimit, argvBytes: 1 });
  });

  it("execs at the model's edge and fails with E2BIG one byte past it", () => {
    expect(execWithEmptyArgv(env)).toBe(0);
    const over = { ...env, LAST: `${env["LAST"]}l` };
    expect(execFits(FILE, [], over, limits)).toMatchObject({ fits: false, overBy: 1 });
    expect(execWithEmptyArgv(over)).toBe(100);
  });
});
