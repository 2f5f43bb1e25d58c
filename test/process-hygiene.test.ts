/**
 * The suite never signals a stranger. Test files run in parallel on one
 * machine, where pid_max may be 32,768 and the suite forks thousands of
 * processes a minute: a pid whose process has been reaped soon names
 * another test's child. Two rules, checked in every test, script and bench
 * source:
 * - a process is signalled through its handle (ChildProcess or Subprocess
 *   `kill()`, which refuse once the child is reaped), through
 *   `signalSeen()` (test/fixtures/process-state.ts: only while the pid still
 *   names the process seen), or by a bare number only where the line says why
 *   that number cannot have been reused (`// pid pinned: ...`);
 * - the pid counter (ns_last_pid) is steered only inside a pid namespace of
 *   the test's own (test/fixtures/pid-namespace.ts).
 * Before this check a cleanup killed candidates of a steered counter by
 * number, and two steps of the soak running beside it died of SIGKILL.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "..");
const HELPER = "test/fixtures/process-state.ts";

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|mts|mjs|js)$/.test(entry.name))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

const files = ["test", "scripts", "bench"].flatMap(sources);

describe("the suite never signals a stranger", () => {
  it("reads the test, script and bench sources", () => {
    expect(files).toContain("test/soak.test.ts");
    expect(files).toContain(HELPER);
  });

  it("signals a pid by number only where the line says why it cannot have been reused", () => {
    const offenders = files
      .filter((file) => file !== HELPER && file !== "test/process-hygiene.test.ts")
      .flatMap((file) =>
        readFileSync(join(root, file), "utf8")
          .split("\n")
          .map((line, index) => ({ line, where: `${file}:${index + 1}` }))
          .filter(({ line }) => /process\.kill\(/.test(line))
          .filter(({ line }) => !/process\.kill\(process\.pid\b/.test(line))
          .filter(({ line }) => !/\/\/ pid pinned: \S/.test(line))
          .map(({ where, line }) => `${where}: ${line.trim()}`),
      );
    expect(offenders).toEqual([]);
  });

  it("steers the pid counter only inside a pid namespace of its own", () => {
    const steering = files.filter(
      (file) =>
        file !== "test/process-hygiene.test.ts" &&
        readFileSync(join(root, file), "utf8").includes("ns_last_pid"),
    );
    for (const file of steering) {
      const text = readFileSync(join(root, file), "utf8");
      expect({ file, inNamespace: text.includes("runInPidNamespace(") }).toEqual({
        file,
        inNamespace: true,
      });
    }
  });
});
