/**
 * A sandboxed child holds no capability unless the host keeps them by name
 * (sandbox.keepCapabilities): what the child's kernel status says, and what
 * a root child can still reach. Run as root, where it matters (a child of an
 * unprivileged host has no capability to lose).
 *
 * Red on the code before the sets were emptied: a root child reported
 * CapEff/CapPrm/CapBnd = the host's and read the host's /proc/<pid>/environ.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { describe, expect, it } from "vitest";
import { nativeStatus, type SandboxOptions, sandboxSupport, spawn } from "../../src/index.js";
import { fixtureBinary } from "../fixtures/build.js";

const full = nativeStatus().loaded && sandboxSupport().missing.length === 0;
const root = process.getuid?.() === 0;

const probe = fixtureBinary("sandbox-probe");
const executable = [dirname(probe), "/usr", "/bin", "/lib", "/lib64"].filter((dir) =>
  existsSync(dir),
);
const box: SandboxOptions = { writable: [], executable };

/** The child's Cap* lines as numbers: { CapEff: 0n, … }. */
function capabilities(text: string): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  for (const [, name, hex] of text.matchAll(/^(Cap\w+):\s+([0-9a-f]+)$/gm)) {
    out[name as string] = BigInt(`0x${hex}`);
  }
  return out;
}

describe.runIf(full && root)("sandbox: capabilities", () => {
  const host = capabilities(execFileSync(probe, ["capabilities"], { encoding: "utf8" }));

  it("empties every set of a root child", async () => {
    expect(host["CapEff"]).not.toBe(0n); // the oracle: this host has some to lose
    const result = await spawn(probe, ["capabilities"], { sandbox: box });
    expect(capabilities(String(result.stdout))).toEqual({
      CapInh: 0n,
      CapPrm: 0n,
      CapEff: 0n,
      CapBnd: 0n,
      CapAmb: 0n,
    });
  });

  it("keeps them when the host says so", async () => {
    const result = await spawn(probe, ["capabilities"], {
      sandbox: { ...box, keepCapabilities: true },
    });
    const kept = capabilities(String(result.stdout));
    expect(kept["CapEff"]).toBe(host["CapEff"]);
    expect(kept["CapBnd"]).toBe(host["CapBnd"]);
  });

  it("a root child cannot read the host's environment", async () => {
    const environ = `/proc/${process.pid}/environ`;
    const result = await spawn("/bin/cat", [environ], {
      sandbox: { writable: [] },
      reject: false,
    });
    expect(result.stdout).toBe("");
    expect(result.exitCode).not.toBe(0);
    const kept = await spawn("/bin/cat", [environ], {
      sandbox: { writable: [], keepCapabilities: true },
      reject: false,
    });
    expect(String(kept.stdout).length).toBeGreaterThan(0); // the oracle: root could
  });

  it("still changes uid when asked, then holds nothing", async () => {
    const result = await spawn(probe, ["capabilities"], { sandbox: box, uid: 65534, gid: 65534 });
    expect(capabilities(String(result.stdout))["CapBnd"]).toBe(0n);
    expect(capabilities(String(result.stdout))["CapEff"]).toBe(0n);
  });
});
