/**
 * Issue 29 item 4: one record per step. The result, the error and the
 * step.end log event agree on whether the step failed and why (`failure`),
 * and on its duration; a child that exited before the kill was delivered did
 * not time out; a named step's error names it once.
 */
import { describe, expect, it } from "vitest";
import { createRuntime } from "../../src/runtime.js";
import { SubprocessError } from "../../src/spawn/spawn-errors.js";
import { isRunning } from "../fixtures/process-state.js";
import { captureLog } from "../helpers/capture-log.js";

const parentEnv = { PATH: process.env["PATH"] ?? "/usr/bin:/bin" };

function setup() {
  const log = captureLog();
  const runtime = createRuntime({ parentEnv, logger: log.logger });
  const endOf = (step: string) =>
    log.events().filter((e) => e["event"] === "step.end" && e["step"] === step);
  return { log, runtime, endOf };
}

/** Blocks the host's event loop until `pid` has exited (a zombie nobody reaped yet) and `ms` passed. */
function busyUntilExited(pid: number | undefined, ms: number): void {
  const until = performance.now() + ms;
  while (pid !== undefined && isRunning(pid)) {
    // The host is busy: the exit cannot be delivered.
  }
  while (performance.now() < until) {
    // Past the deadline with the exit undelivered: the timer fires first.
  }
}

describe("one record per step", () => {
  it("a step that exited 0 before its deadline did not time out, even when the host was busy past it", async () => {
    const { runtime, endOf } = setup();
    const handle = runtime.bash("exit 0", { step: "quick", timeout: 1000, reject: false });
    busyUntilExited(handle.pid, 1100);
    const result = await handle;
    expect(result.exitCode).toBe(0);
    expect(result.signal).toBeNull();
    expect(result.failure).toBeNull();
    const [end] = endOf("quick");
    expect(end).toMatchObject({ ok: true, failure: null, exitCode: 0 });
    // The same step rejects nothing with reject: true.
    const again = runtime.bash("exit 0", { step: "quick2", timeout: 1000 });
    busyUntilExited(again.pid, 1100);
    await expect(again).resolves.toMatchObject({ failure: null });
  });

  it("a timed-out step: the result, the error and the log event say failure timeout", async () => {
    const { runtime, endOf } = setup();
    const result = await runtime.bash("exec sleep 30", {
      step: "slow",
      timeout: 50,
      killGraceMs: 100,
      reject: false,
    });
    expect(result.failure).toBe("timeout");
    const [end] = endOf("slow");
    expect(end).toMatchObject({ ok: false, failure: "timeout", signal: "SIGTERM" });
    expect(end?.["durationMs"]).toBe(result.durationMs);

    const error = (await runtime
      .bash("exec sleep 30", { step: "slow2", timeout: 50, killGraceMs: 100 })
      .then(
        () => undefined,
        (e: unknown) => e,
      )) as SubprocessError;
    expect(error).toBeInstanceOf(SubprocessError);
    expect(error.failure).toBe("timeout");
    expect(error.reason).toBe("timeout"); // the deprecated alias
    const [end2] = endOf("slow2");
    expect(end2).toMatchObject({ ok: false, failure: "timeout" });
    expect(end2?.["durationMs"]).toBe(error.durationMs);
  });

  it("a failed exit: ok false with reject false too, one durationMs", async () => {
    const { runtime, endOf } = setup();
    const result = await runtime.bash("exit 3", { step: "three", reject: false });
    expect(result.failure).toBe("exit");
    const [end] = endOf("three");
    expect(end).toMatchObject({ ok: false, failure: "exit", exitCode: 3 });
    expect(end?.["durationMs"]).toBe(result.durationMs);
    const ok = await runtime.bash("true", { step: "fine" });
    expect(endOf("fine")[0]?.["durationMs"]).toBe(ok.durationMs);
  });

  it("a named step's error names it once, in the message and the stack", async () => {
    const { runtime } = setup();
    const error = (await runtime.bash("exit 3", { step: "deploy" }).then(
      () => undefined,
      (e: unknown) => e,
    )) as SubprocessError;
    expect(error.message.startsWith('step "deploy": Command failed')).toBe(true);
    expect(error.stack?.split("\n")[0]).toBe(`SubprocessError: ${error.message}`);
    expect(error.stack?.match(/step "deploy"/g)).toHaveLength(1);
  });

  it("runtime.spawn follows the same rule", async () => {
    const { runtime, endOf } = setup();
    const result = await runtime.spawn("false", [], { step: "no", reject: false });
    expect(result.failure).toBe("exit");
    expect(endOf("no")[0]).toMatchObject({ ok: false, failure: "exit" });
    expect(endOf("no")[0]?.["durationMs"]).toBe(result.durationMs);
    const error = (await runtime.spawn("false", [], { step: "no2" }).then(
      () => undefined,
      (e: unknown) => e,
    )) as SubprocessError;
    expect(error.stack?.match(/step "no2"/g)).toHaveLength(1);
  });
});
