/**
 * The exec controls on the child_process fallback: uid and gid are applied
 * (child_process has them, and drops the supplementary groups with them);
 * every control it cannot apply refuses the spawn with a named
 * FallbackUnsupportedError instead of being silently dropped. Seen red once
 * with the fallback ignoring every control (all nine tests failed), then
 * restored.
 */
import { describe, expect, it } from "vitest";
import {
  FallbackUnsupportedError,
  nativeStatus,
  type SpawnOptions,
  spawn,
} from "../../src/index.js";
import { useQuietFallback } from "../helpers/quiet-fallback.js";

// This file runs in its own worker process (forks pool).
useQuietFallback();

const isRoot = process.getuid?.() === 0;

describe("exec controls on the fallback engine", () => {
  it("is the fallback", () => {
    expect(nativeStatus().loaded).toBe(false);
  });

  const refused: [string, SpawnOptions][] = [
    ["umask", { umask: 0o22 }],
    ["rlimits", { rlimits: { nofile: 100 } }],
    ["nice", { nice: 3 }],
    ["noNewPrivileges", { noNewPrivileges: true }],
    ["parentDeathSignal", { parentDeathSignal: "SIGKILL" }],
    ["groups", { groups: [5] }],
    ["groups", { groups: [] }],
    ["groups", { uid: 0, groups: [5] }],
  ];
  for (const [name, options] of refused) {
    it(`refuses ${JSON.stringify(options)}, naming options.${name}`, async () => {
      const error = await spawn("/bin/true", [], options).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(FallbackUnsupportedError);
      expect(error).toMatchObject({ code: "ERR_EXACTSPAWN_FALLBACK_UNSUPPORTED" });
      expect((error as Error).message).toContain(`options.${name}`);
    });
  }

  it.runIf(isRoot)("applies uid and gid, and no supplementary group remains", async () => {
    const result = await spawn("/bin/cat", ["/proc/self/status"], {
      uid: 65_534,
      gid: 65_533,
    });
    const status = String(result.stdout);
    expect(status).toMatch(/^Uid:\t65534\t65534\t65534\t65534$/m);
    expect(status).toMatch(/^Gid:\t65533\t65533\t65533\t65533$/m);
    expect(status).toMatch(/^Groups:\t *$/m);
  });
});
