/**
 * What a sandboxed child's kernel status says about privileges, for the parts
 * an ordinary root host hides (issue 27, item 9):
 * - `no_new_privs` is set (`NoNewPrivs: 1`) for a root host too, where
 *   Landlock and seccomp would install without it (root holds
 *   CAP_SYS_ADMIN), for a root child and for a `uid` child;
 * - the effective, permitted and inheritable sets are emptied, seen from a
 *   host that cannot hide a kept set: it lacks CAP_SETPCAP (so the child
 *   cannot empty its bounding set, which alone makes a root exec grant
 *   nothing) and holds an inheritable capability (a plain root host's is 0,
 *   so a kept inheritable set reads 0 anyway). The host is started by
 *   `setpriv --bounding-set=-setpcap --inh-caps=+net_raw`.
 *
 * Seen red with `npm run test:mutants -- --only no-new-privs`,
 * `--only caps-keep-effective-permitted` and `--only caps-keep-inheritable`.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { nativeStatus, sandboxSupport, spawn } from "../../src/index.js";
import { PACKAGE_ROOT } from "../../src/native.js";

const root = process.getuid?.() === 0;
const full = nativeStatus().loaded && sandboxSupport().missing.length === 0;
const setpriv = existsSync("/usr/bin/setpriv") ? "/usr/bin/setpriv" : undefined;

/** The named lines of a /proc/<pid>/status text: { NoNewPrivs: "1", CapEff: "0000…" }. */
function status(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [, name, value] of text.matchAll(/^(\w+):\s+(.*)$/gm)) out[name!] = value!;
  return out;
}

const CAP_NET_RAW = 1n << 13n;
const CAP_SETPCAP = 1n << 8n;

describe.runIf(full && root)("sandbox: privileges a root host would hide", () => {
  it("the child runs with no_new_privs, as root and as another uid", async () => {
    const asRoot = await spawn("/bin/cat", ["/proc/self/status"], { sandbox: { writable: [] } });
    expect(status(String(asRoot.stdout))["NoNewPrivs"]).toBe("1");
    const asNobody = await spawn("/bin/cat", ["/proc/self/status"], {
      sandbox: { writable: [] },
      uid: 65534,
      gid: 65534,
    });
    const seen = status(String(asNobody.stdout));
    expect(seen["Uid"]).toMatch(/^65534\s/); // the oracle: the uid change happened
    expect(seen["NoNewPrivs"]).toBe("1");
  });

  it.runIf(setpriv !== undefined)(
    "every set is empty where the host lacks CAP_SETPCAP and holds an inheritable capability",
    () => {
      const host = `
        import { readFileSync } from "node:fs";
        const { spawn } = await import(${JSON.stringify(join(PACKAGE_ROOT, "dist", "index.js"))});
        const child = await spawn("/bin/cat", ["/proc/self/status"], { sandbox: { writable: [] } });
        console.log(JSON.stringify({ host: readFileSync("/proc/self/status", "utf8"), child: String(child.stdout) }));`;
      const run = spawnSync(
        setpriv!,
        [
          "--bounding-set=-setpcap",
          "--inh-caps=+net_raw",
          "--",
          process.execPath,
          "--input-type=module",
          "-e",
          host,
        ],
        { encoding: "utf8" },
      );
      expect(run.stderr).toBe("");
      const seen = JSON.parse(run.stdout) as { host: string; child: string };
      const hostStatus = status(seen.host);
      // The oracle: the host is the one described above.
      expect(BigInt(`0x${hostStatus["CapEff"]}`) & CAP_SETPCAP).toBe(0n);
      expect(BigInt(`0x${hostStatus["CapEff"]}`)).not.toBe(0n);
      expect(BigInt(`0x${hostStatus["CapInh"]}`) & CAP_NET_RAW).toBe(CAP_NET_RAW);
      const child = status(seen.child);
      expect({
        CapInh: child["CapInh"],
        CapPrm: child["CapPrm"],
        CapEff: child["CapEff"],
        CapAmb: child["CapAmb"],
      }).toEqual({
        CapInh: "0000000000000000",
        CapPrm: "0000000000000000",
        CapEff: "0000000000000000",
        CapAmb: "0000000000000000",
      });
      expect(child["NoNewPrivs"]).toBe("1");
    },
  );
});
