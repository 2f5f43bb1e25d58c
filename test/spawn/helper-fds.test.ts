/**
 * A child started through the exec helper (a `uid` change, a PID
 * namespace's leader) holds only its stdio: the helper's start-status pipe,
 * which it keeps across its own exec to report a failed start, is
 * close-on-exec, so the command never holds it (a command that did could
 * write a forged start or exit report to its host). Seen red with the
 * helper not setting FD_CLOEXEC on it (row helper-status-fd-cloexec).
 */
import { describe, expect, it } from "vitest";
import { nativeStatus, pidNamespaceSupport, spawn } from "../../src/index.js";

const isRoot = process.getuid?.() === 0;
/** The fds the shell holds (not the glob's own directory fd, closed once it is read). */
const LIST_FDS =
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text
  'for f in /proc/self/fd/*; do readlink "$f" >/dev/null && echo "${f##*/}"; done; true';
const stdio = ["ignore", "pipe", "pipe"] as const;

describe.runIf(nativeStatus().loaded && isRoot)("a child through the exec helper", () => {
  it("with a uid holds fds 0, 1 and 2 only", async () => {
    const result = await spawn("/bin/sh", ["-c", LIST_FDS], {
      uid: 65534,
      gid: 65534,
      stdio: [...stdio],
    });
    expect(result.stdout.trim().split("\n")).toEqual(["0", "1", "2"]);
  });

  it.runIf(pidNamespaceSupport().available)(
    "as a PID namespace's leader holds fds 0, 1 and 2 only",
    async () => {
      const result = await spawn("/bin/sh", ["-c", LIST_FDS], {
        contain: { mechanism: "pid-namespace" },
        stdio: [...stdio],
      });
      expect(result.stdout.trim().split("\n")).toEqual(["0", "1", "2"]);
    },
  );
});
