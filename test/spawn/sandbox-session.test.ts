/**
 * A sandboxed child never keeps the host's controlling terminal: it always
 * starts a session of its own, whatever `setsid` says (belt and braces with
 * the filter's TIOCSTI rule). Red on the code that set up a session only
 * when asked: the child's sid was the host's.
 */
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { describe, expect, it } from "vitest";
import {
  nativeStatus,
  type SandboxOptions,
  sandboxSupport,
  spawn,
  spawnSync,
} from "../../src/index.js";
import { fixtureBinary } from "../fixtures/build.js";

const full = nativeStatus().loaded && sandboxSupport().missing.length === 0;
const probe = fixtureBinary("sandbox-probe");
const executable = [dirname(probe), "/usr", "/bin", "/lib", "/lib64"].filter((dir) =>
  existsSync(dir),
);
const box: SandboxOptions = { writable: [], executable };

function session(stdout: unknown): { sid: number; pid: number } {
  const [sid, pid] = String(stdout).trim().split(" ").map(Number) as [number, number];
  return { sid, pid };
}

describe.runIf(full)("sandbox: a session of its own", () => {
  it("leads a new session with no controlling terminal, through spawn and spawnSync", async () => {
    for (const result of [
      await spawn(probe, ["sid"], { sandbox: box, setsid: false }),
      spawnSync(probe, ["sid"], { sandbox: box }),
    ]) {
      const { sid, pid } = session(result.stdout);
      expect(sid).toBe(pid);
    }
    const tty = await spawn(probe, ["ctty"], { sandbox: box });
    expect(String(tty.stdout).trim()).toBe("open ENXIO");
  });

  it("an unsandboxed child stays in the host's session unless asked", async () => {
    const { sid, pid } = session((await spawn(probe, ["sid"])).stdout);
    expect(sid).not.toBe(pid);
  });
});
