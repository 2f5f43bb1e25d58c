/**
 * A failure writing the user namespace's id maps names the call that failed
 * and the file (issue 27, item 7): the `openat` of `/proc/self/setgroups`
 * (then `uid_map`, `gid_map`) is reported as `openat`, a refused write as
 * `write`. The host runs in a private mount namespace whose `/proc` is
 * read-only, so the child's open for writing fails with EROFS; the raw
 * binding asks for the view in a user namespace (a root host would not need
 * one, so the library's own policy never asks for it here).
 *
 * Red before the fix: the error said `syscall: "write"` and carried the
 * target's path (`/bin/true`) instead of the /proc file's.
 */
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nativeStatus, sandboxSupport } from "../../src/index.js";
import { removeDir, runHost, scratchDir } from "../faults/host.js";

const root = process.getuid?.() === 0;
const view = nativeStatus().loaded && sandboxSupport().readOnlyView === true;
const unshare = spawnSync("unshare", ["--version"]).status === 0;

let dir = "";
beforeAll(() => {
  dir = scratchDir("exactspawn-idmaps-");
});
afterAll(() => {
  if (dir !== "") removeDir(dir);
});

const HOST = `
  const { nativeBinding } = await import(new URL("./native.js", DIST).href);
  const { deadlinePlan, nativeDeadline } = await import(new URL("./spawn/deadline-plan.js", DIST).href);
  let error = null;
  try {
    nativeBinding().spawnSync({
      file: "/bin/true",
      argv: ["true"],
      envp: [],
      stdio: [-1, -1, -1],
      setsid: true,
      deadline: nativeDeadline(deadlinePlan({ timeout: undefined, killSignal: 15, killGraceMs: 1000, maxBuffer: 1024, ownGroup: true })),
      sandbox: {
        readAll: true, read: [], write: [], exec: [], execWritable: false, network: false,
        landlock: false, seccomp: false, dropCapabilities: false,
        readOnlyView: true, viewPaths: [], userNamespace: true,
      },
    });
  } catch (e) {
    error = { code: e.code, syscall: e.syscall, step: e.step, path: e.path };
  }
  report({ error });
`;

describe.runIf(root && view && unshare)("sandbox: the user namespace's id maps", () => {
  it("an open of /proc/self/setgroups refused (a read-only /proc) is named openat, with its path", () => {
    const run = runHost<{ error: Record<string, unknown> | null }>(dir, HOST, {
      wrap: [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        'mount -o remount,bind,ro /proc && exec "$0" "$@"',
      ],
    });
    expect(run.stderr).toBe("");
    expect(run.report?.error).toEqual({
      code: "EROFS",
      syscall: "openat",
      step: "sandbox",
      path: "/proc/self/setgroups",
    });
  });
});
