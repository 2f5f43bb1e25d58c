/**
 * The fallback's one notice (issue 20, item 5): an addon that failed to load
 * is told once by the loader, at `error` — the library's default level — (see
 * test/native.test.ts and test/native/kernel-support.test.ts); a fallback
 * chosen on purpose (EXACTSPAWN_NATIVE=0, disableNative()) is a `warn` from
 * the fallback engine at its first spawn. Each case runs in a fresh module graph: the
 * notice is once per process.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { captureLog } from "../helpers/capture-log.js";

afterEach(() => vi.resetModules());

async function noticeLevel(reason: string): Promise<unknown[]> {
  const { setLogger } = await import("../../src/log.js");
  const { fallbackEngine } = await import("../../src/spawn/fallback-engine.js");
  const { engineRequest, spawnInput } = await import("../../src/spawn/spawn-request.js");
  const capture = captureLog();
  setLogger(capture.logger);
  try {
    const exited = new Promise((resolve) => {
      fallbackEngine(reason).start(
        engineRequest(spawnInput("spawn", "/bin/true", [], {}), undefined),
        resolve,
        () => {},
      );
    });
    await exited;
  } finally {
    setLogger(undefined);
  }
  return capture
    .events()
    .filter((e) => String(e["msg"]).includes("native addon not in use"))
    .map((e) => [e["level"], e["lib"]]);
}

describe("the fallback notice", () => {
  it("is not repeated when the addon could not load (the loader said it once, at error)", async () => {
    expect(await noticeLevel("could not load the native addon on linux-x64: ENOENT")).toEqual([]);
  });

  it("is a warning when the fallback was chosen", async () => {
    expect(await noticeLevel("disabled by EXACTSPAWN_NATIVE")).toEqual([[40, "exactspawn"]]);
  });
});
