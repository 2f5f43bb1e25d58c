/**
 * An exception a user's code throws while the exit is being delivered is the
 * user's, and must reach the host's uncaught-exception path exactly as with
 * child_process (issue 11, bug 2: the addon's exit callback cleared every
 * pending exception as if it were teardown, so a nextTick that threw after
 * `await spawn(...)` vanished and the host exited 0).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nativeStatus } from "../../src/native.js";
import { removeDir, runHost, scratchDir } from "./host.js";

let dir: string;

describe("exceptions thrown around the exit delivery", () => {
  beforeAll(() => {
    dir = scratchDir("exactspawn-throw-");
  });
  afterAll(() => removeDir(dir));

  it("a nextTick that throws after `await spawn()` crashes the host", () => {
    const host = runHost(
      dir,
      `
      import { spawn } from DIST;
      await spawn("/bin/true");
      process.nextTick(() => { throw new Error("thrown-in-tick"); });
      setTimeout(() => console.log("still alive"), 500);
    `,
    );
    expect(host.stdout).not.toContain("still alive");
    expect(host.stderr).toContain("thrown-in-tick");
    expect(host.status).toBe(1);
  });

  it("a throw inside a then() callback's tick reaches process.on('uncaughtException')", () => {
    const host = runHost(
      dir,
      `
      import { spawn } from DIST;
      const seen = [];
      process.on("uncaughtException", (error) => seen.push(error.message));
      const run = spawn("/bin/sh", ["-c", "echo hi"]).then((r) => {
        process.nextTick(() => { throw new Error("from-" + r.stdout.trim()); });
      });
      // After the callback's tick (an order of events, not 500 ms a loaded machine may not give).
      run.then(() => setImmediate(() => report(seen)));
    `,
    );
    expect(host.stderr).toBe("");
    expect(host.status).toBe(0);
    expect(host.report).toEqual(["from-hi"]);
  });

  // The raw binding exists only where the addon loaded.
  it.runIf(nativeStatus().loaded)(
    "an onExit the raw binding calls that throws is uncaught; later exits still arrive",
    () => {
      const host = runHost(
        dir,
        `
      const { nativeBinding } = await import(DIST.replace(/index\\.js$/, "native.js"));
      const seen = [];
      const exits = [];
      process.on("uncaughtException", (error) => seen.push(error.message));
      const raw = (onExit) => ({ file: "/bin/true", argv: ["true"], envp: [], stdio: [-1, -1, -1], onExit });
      for (let i = 0; i < 3; i++) nativeBinding().spawn(raw(() => { throw new Error("onExit-" + i); }));
      nativeBinding().spawn(raw((exit) => exits.push(exit.exitCode)));
      const wait = () => (seen.length === 3 && exits.length === 1 ? report({ seen: seen.sort(), exits }) : setTimeout(wait, 10));
      wait();
    `,
      );
      expect(host.stderr).toBe("");
      expect(host.status).toBe(0);
      expect(host.report).toEqual({ seen: ["onExit-0", "onExit-1", "onExit-2"], exits: [0] });
    },
  );
});
