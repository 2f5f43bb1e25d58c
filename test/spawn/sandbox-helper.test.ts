/**
 * Every sandboxed child confines itself in the exec helper (issue 27): the
 * vfork child keeps only signals, session/group, stdio and one execve (of the
 * helper); the helper — in its own memory, after that exec — builds the
 * Landlock ruleset from the paths in its plan (each path opened there, in the
 * child's own mount namespace and with its credentials), restricts itself,
 * installs the filter and execs the target. The host builds no ruleset.
 *
 * The oracle is strace: per process, the order of the exec calls and the
 * Landlock and seccomp calls. A sandbox that keeps the host's credentials and
 * makes no user-namespace view (`readOnlyView: false`; a root host's view,
 * which needs only a mount namespace) is the case that took the vfork child
 * before.
 *
 * Red before: each such child called landlock_restrict_self and seccomp
 * before any exec (on the host's memory), and the host made the ruleset
 * (landlock_create_ruleset with attributes, landlock_add_rule) itself. Red
 * with the sandbox clause removed from needs_helper():
 * `npm run test:mutants -- --only sandboxed-child-through-helper`.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  nativeStatus,
  sandboxSupport,
  spawn,
  spawnSync as spawnSyncExact,
} from "../../src/index.js";

const dist = pathToFileURL(join(resolve(import.meta.dirname, "../.."), "dist/index.js")).href;
const hasStrace = spawnSync("strace", ["-V"]).status === 0;
const enforced = nativeStatus().loaded && sandboxSupport().missing.length === 0;

let dir = "";
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "exactspawn-sandbox-helper-"));
});
afterAll(() => {
  if (dir !== "") rmSync(dir, { recursive: true, force: true });
});

const CALLS = [
  "execve",
  "execveat",
  "landlock_create_ruleset",
  "landlock_add_rule",
  "landlock_restrict_self",
  "seccomp",
];

/** Per pid, the calls of CALLS that succeeded, in order (the host's own execve left out). */
function callsByPid(log: string, host: string): Map<string, string[]> {
  const byPid = new Map<string, string[]>();
  for (const line of readFileSync(log, "utf8").split("\n")) {
    const [, pid, call] = /^(\d+)\s+(\w+)\(/.exec(line) ?? [];
    if (pid === undefined || call === undefined || !CALLS.includes(call)) continue;
    if (line.includes("= -1") || (call === "execve" && line.includes(host))) continue;
    byPid.set(pid, [...(byPid.get(pid) ?? []), call]);
  }
  return byPid;
}

describe.runIf(hasStrace && enforced)(
  "sandbox: every sandboxed child goes through the exec helper",
  () => {
    it("the helper builds the ruleset and confines itself; the host and the vfork child do neither", () => {
      const writable = join(dir, "w");
      const host = join(dir, "host.mjs");
      writeFileSync(
        host,
        `import { mkdirSync } from "node:fs";
      import { spawn } from ${JSON.stringify(dist)};
      mkdirSync(${JSON.stringify(writable)});
      for (const readOnlyView of [false, false, undefined]) {
        const r = await spawn("/bin/true", [], { sandbox: { writable: [${JSON.stringify(writable)}], readOnlyView } });
        if (r.exitCode !== 0) throw new Error("exit " + r.exitCode);
      }
      console.log("ok");`,
      );
      const log = join(dir, "trace.log");
      const result = spawnSync(
        "strace",
        ["-f", "-qq", "-e", `trace=${CALLS.join(",")}`, "-o", log, process.execPath, host],
        { encoding: "utf8" },
      );
      expect(result.stdout).toBe("ok\n");
      const byPid = callsByPid(log, process.execPath);
      const children = [...byPid.entries()].filter(([, calls]) => calls.includes("execve"));
      expect(children).toHaveLength(3);
      for (const [, calls] of children) {
        expect(calls[0]).toBe("execveat"); // the helper, before any confinement
        expect(calls.at(-1)).toBe("execve"); // the target, last
        const middle = calls.slice(1, -1);
        expect(middle).toContain("landlock_add_rule");
        expect(middle.slice(-2)).toEqual(["landlock_restrict_self", "seccomp"]);
      }
      // The host (every pid without an execve of its own) only probes the ABI
      // (landlock_create_ruleset with no attributes, sandboxSupport()).
      const hostCalls = [...byPid.entries()]
        .filter(([, calls]) => !calls.includes("execve"))
        .flatMap(([, calls]) => calls);
      expect(hostCalls.filter((call) => call !== "landlock_create_ruleset")).toEqual([]);
      const creates = readFileSync(log, "utf8")
        .split("\n")
        .filter((line) => line.includes("landlock_create_ruleset(") && !line.includes("= -1"));
      const hostPids = new Set(
        [...byPid.entries()].filter(([, calls]) => !calls.includes("execve")).map(([pid]) => pid),
      );
      for (const line of creates.filter((l) => hostPids.has(l.split(/\s+/)[0] as string))) {
        expect(line).toMatch(/landlock_create_ruleset\(NULL, 0,/);
      }
    });

    it.runIf(process.getuid?.() === 0)(
      "opens the rules' paths with the child's credentials: a path its uid cannot reach is named",
      async () => {
        // Red before: the root host opened the path for the rule and the
        // nobody child ran.
        const closed = join(dir, "closed");
        mkdirSync(join(closed, "inner"), { recursive: true });
        chmodSync(closed, 0o700);
        const options = {
          uid: 65_534,
          gid: 65_534,
          sandbox: { writable: [join(closed, "inner")] },
        };
        const expected = {
          code: "EACCES",
          syscall: "landlock_add_rule",
          step: "sandbox",
          path: join(closed, "inner"),
        };
        const failed = await spawn("/bin/true", [], options).then(
          () => null,
          (error: unknown) => error,
        );
        expect(failed).toMatchObject(expected);
        expect(() => spawnSyncExact("/bin/true", [], options)).toThrow(
          expect.objectContaining(expected),
        );
      },
    );
  },
);
