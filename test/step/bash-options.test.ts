/**
 * Issue 29 item 3: spawn's controls reach bash steps (one option table,
 * step-options.ts), checked on what the real step saw; an unknown option
 * names the nearest known one.
 */
import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import { createRuntime } from "../../src/runtime.js";
import { SubprocessError } from "../../src/spawn/spawn-errors.js";
import { SPAWN_OPTION_KEYS } from "../../src/spawn/spawn-options.js";
import { BASH_STEP_OPTION_KEYS } from "../../src/step/bash-step.js";
import { RUNTIME_SPAWN_OPTION_KEYS } from "../../src/step/runtime-spawn.js";
import { captureLog } from "../helpers/capture-log.js";

const runtime = createRuntime({
  parentEnv: { PATH: process.env["PATH"] ?? "/usr/bin:/bin" },
  logger: captureLog().logger,
});
const native = process.env["EXACTSPAWN_NATIVE"] !== "0";
const isRoot = process.getuid?.() === 0;

describe("runtime.bash takes spawn's controls", () => {
  // The fallback refuses exec controls it cannot apply (FallbackUnsupportedError).
  it.runIf(native)("rlimits: the step's own soft and hard nofile limits", async () => {
    const result = await runtime.bash("ulimit -Sn; ulimit -Hn", {
      rlimits: { nofile: [64, 64] },
    });
    expect(result.stdout).toBe("64\n64\n");
  });

  it.runIf(isRoot && native)("uid and gid: the step runs as the given ids", async () => {
    const result = await runtime.bash("id -u; id -g", { uid: 65534, gid: 65534 });
    expect(result.stdout).toBe("65534\n65534\n");
  });

  it("maxBuffer: output over the cap ends the step with failure maxBuffer", async () => {
    const result = await runtime.bash("head -c 100000 /dev/zero", {
      maxBuffer: 1000,
      reject: false,
    });
    expect(result.failure).toBe("maxBuffer");
    const error = await runtime.bash("head -c 100000 /dev/zero", { maxBuffer: 1000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SubprocessError);
  });

  it('encoding "buffer": stdout as bytes, output still text', async () => {
    const result = await runtime.bash("printf 'a\\377b\\n'", { encoding: "buffer" });
    expect(Buffer.isBuffer(result.stdout)).toBe(true);
    expect([...(result.stdout as Buffer)]).toEqual([0x61, 0xff, 0x62, 0x0a]);
    expect(result.output).toBe("a\ufffdb");
  });

  it("every spawn control but the ones a runtime decides is a bash option and a runtime.spawn option", () => {
    const decidedByRuntime = ["env", "path"];
    const decidedByStep = ["argv0", "processGroup"];
    for (const key of SPAWN_OPTION_KEYS) {
      expect(RUNTIME_SPAWN_OPTION_KEYS.has(key)).toBe(!decidedByRuntime.includes(key));
      expect(BASH_STEP_OPTION_KEYS.has(key)).toBe(
        !decidedByRuntime.includes(key) && !decidedByStep.includes(key),
      );
    }
  });

  it("an unknown option names the nearest known one", () => {
    expect(() => runtime.bash("true", { rlimit: {} } as never)).toThrow(
      'bash: unknown option "rlimit"; did you mean "rlimits"?',
    );
    expect(() => runtime.bash("true", { timout: 5 } as never)).toThrow('did you mean "timeout"?');
    expect(() => runtime.spawn("true", [], { contxt: {} } as never)).toThrow(
      'runtime.spawn: unknown option "contxt"; did you mean "context"?',
    );
    expect(() => runtime.bash("true", { processGroup: false } as never)).toThrow(
      'bash: unknown option "processGroup"',
    );
  });

  it("rlimits.stack sizes the step's exec: the plan uses the child's own limit", () => {
    const plan = runtime.planBash("true", { rlimits: { stack: 1024 * 1024 } });
    expect(plan.limits.execLimit).toBe(256 * 1024);
  });
});
