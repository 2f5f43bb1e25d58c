/**
 * The exit watch's own thread (the waiter under Bun and Deno, and under Node
 * with EXACTSPAWN_EXIT_WATCH=thread) hands exits to JavaScript through a
 * thread-safe function. When Node-API refuses such a call (no memory for its
 * queue entry; debugRefuseNotifies stands in for that), the event set tells
 * the environment again a little later: the host never stops hearing of
 * exits (issue 27, finding 7). Seen red with the retry removed
 * (EventSet::run ignoring the notify's result, as before): the host waited
 * for its first exit for ever.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nativeStatus } from "../../src/native.js";
import { removeDir, runHost, scratchDir } from "./host.js";

let dir: string;
beforeAll(() => {
  dir = scratchDir("exactspawn-notify-");
});
afterAll(() => removeDir(dir));

describe.runIf(nativeStatus().loaded)("a hand-over to JavaScript that Node-API refuses", () => {
  it("is made again: every exit still arrives", () => {
    const run = runHost<{ first: number | null; later: (number | null)[]; pidfds: number }>(
      dir,
      `
      const { spawn } = await import(DIST);
      const { nativeBinding } = await import(DIST.replace(/index\\.js$/, "native.js"));
      const binding = nativeBinding();
      binding.debugRefuseNotifies(3);
      const first = (await spawn("/bin/sh", ["-c", "exit 7"], { reject: false })).exitCode;
      binding.debugRefuseNotifies(2);
      const later = (
        await Promise.all(
          [1, 2, 3, 4, 5].map((code) => spawn("/bin/sh", ["-c", "exit " + code], { reject: false })),
        )
      ).map((r) => r.exitCode);
      await settle(() => pidfds() === 0);
      report({ first, later, pidfds: pidfds() });`,
      {
        env: { EXACTSPAWN_EXIT_WATCH: "thread", EXACTSPAWN_NATIVE: "required" },
        timeoutMs: 60_000,
      },
    );
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: "" });
    expect(run.report).toEqual({ first: 7, later: [1, 2, 3, 4, 5], pidfds: 0 });
  });
});
