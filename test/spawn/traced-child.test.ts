/**
 * A child held by a tracer: its pidfd turns readable at exit, but wait4
 * returns nothing until the tracer has waited for it (test/fixtures/exit-tracer.c
 * holds the exit for HOLD_MS). Every reap loop (the exit watch of spawn and
 * runtime.bash, spawnSync's poll loop) must then back off (1 ms doubling to
 * 100 ms, native/core/reap.h), not re-poll at once; so must the orphan
 * reaper, which takes over the children of a terminated worker: the addon counts each
 * attempt that found the child not waitable, and over the held time the
 * back-off allows at most 7 + elapsed / 100 ms of them (a busy re-poll made
 * tens of thousands). The bound only depends on the schedule: a slow machine
 * makes fewer attempts, never more.
 */
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { createRuntime, nativeStatus, spawn, spawnSync } from "../../src/index.js";
import { nativeBinding } from "../../src/native.js";
import { fixtureBinary } from "../fixtures/build.js";
import { eventually, exists } from "../fixtures/process-state.js";

const dist = pathToFileURL(join(resolve(import.meta.dirname, "../.."), "dist/index.js")).href;

const HOLD_MS = 300;
const SCRIPT = `read seized < <(exec "$TRACER" $$ ${HOLD_MS}); exit 7`;

function retries(): number {
  return nativeBinding()!.debugCounters!().reapRetries;
}

/** Runs `body`, then checks the attempts it cost against the back-off's schedule. */
async function expectBackedOff(body: () => Promise<number | null> | number | null) {
  const before = retries();
  const started = performance.now();
  const exitCode = await body();
  const elapsed = performance.now() - started;
  const attempts = retries() - before;
  console.log(`traced child: ${attempts} reap attempts in ${elapsed.toFixed(0)} ms`);
  expect(exitCode).toBe(7);
  expect(attempts).toBeGreaterThanOrEqual(1); // the held exit did happen
  expect(attempts).toBeLessThanOrEqual(8 + Math.ceil(elapsed / 100));
  // Retried, reaped, torn down: every watch moved through its lifetime by the table.
  expect(nativeBinding()!.debugCounters!().invalidWatchMoves).toBe(0);
}

describe.runIf(nativeStatus().loaded)(
  "a traced child's exit is waited for without spinning",
  () => {
    const env = () => ({ TRACER: fixtureBinary("exit-tracer") });

    it("spawn", async () => {
      await expectBackedOff(
        async () =>
          (await spawn("/bin/bash", ["-c", SCRIPT], { env: env(), reject: false })).exitCode,
      );
    });

    it("spawnSync", async () => {
      await expectBackedOff(
        () => spawnSync("/bin/bash", ["-c", SCRIPT], { env: env(), reject: false }).exitCode,
      );
    });

    it("runtime.bash", async () => {
      const runtime = createRuntime();
      await expectBackedOff(
        async () => (await runtime.bash(SCRIPT, { extra: env(), reject: false })).exitCode,
      );
    });

    it("the orphan reaper (the child of a terminated worker)", async () => {
      const tracer = fixtureBinary("exit-tracer");
      // The child waits first, so the worker is gone (and the child handed to
      // the reaper) before its exit is held.
      const script = `sleep 0.3; ${SCRIPT}`;
      await expectBackedOff(async () => {
        const worker = new Worker(
          `import(${JSON.stringify(dist)}).then(({ spawn }) => {
          const child = spawn("/bin/bash", ["-c", ${JSON.stringify(script)}], { env: { TRACER: ${JSON.stringify(tracer)} }, reject: false });
          require("node:worker_threads").parentPort.postMessage(child.pid);
        });`,
          { eval: true },
        );
        const pid = await new Promise<number>((done) => worker.once("message", done));
        await worker.terminate();
        expect(await eventually(() => !exists(pid))).toBe(true); // reaped, not a zombie
        return 7;
      });
    });
  },
);
