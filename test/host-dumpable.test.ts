/**
 * The policy of src/host-dumpable.ts with a fake binding (what is asked of
 * the addon, the one warning without it), and createRuntime's use of it with
 * the real addon (the process's dumpable flag read back through prctl).
 * The end-to-end check, a step of a non-root host reading /proc/<host>/environ,
 * is test/host-proc-secrets.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { guardHostProc, resetHostProcWarning } from "../src/host-dumpable.js";
import { createRuntime } from "../src/index.js";
import { type NativeBinding, nativeBinding } from "../src/native.js";
import { captureLog } from "./helpers/capture-log.js";

afterEach(() => resetHostProcWarning());

function fakeBinding(result: number): { binding: NativeBinding; calls: boolean[] } {
  const calls: boolean[] = [];
  const binding = {
    setDumpable: (flag: boolean) => {
      calls.push(flag);
      return result;
    },
  } as unknown as NativeBinding;
  return { binding, calls };
}

describe("guardHostProc", () => {
  it("asks the addon to make the host non-dumpable, and says nothing", () => {
    const { binding, calls } = fakeBinding(0);
    const log = captureLog();
    expect(guardHostProc(binding, log.logger)).toBe("non-dumpable");
    expect(calls).toEqual([false]);
    expect(log.events()).toEqual([]);
  });

  it("without the addon: the host stays dumpable, one warning per process naming the cause", () => {
    const log = captureLog();
    expect(guardHostProc(null, log.logger)).toBe("dumpable");
    expect(guardHostProc(null, log.logger)).toBe("dumpable");
    const events = log.events();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      level: 40,
      event: "host.dumpable",
      cause: "the native addon is not loaded",
    });
    expect(String(events[0]!["msg"])).toContain("uid or sandbox");
  });

  it("a refused prctl warns with its errno", () => {
    const { binding } = fakeBinding(-1);
    const log = captureLog();
    expect(guardHostProc(binding, log.logger)).toBe("dumpable");
    expect(log.events()[0]).toMatchObject({ cause: "prctl(PR_SET_DUMPABLE) failed (errno 1)" });
  });
});

describe.runIf(nativeBinding()?.dumpable !== undefined)("createRuntime and the host's flag", () => {
  const binding = nativeBinding()!;
  afterEach(() => binding.setDumpable!(true));

  it("a runtime makes the host non-dumpable; hostDumpable: true leaves it as it is", () => {
    binding.setDumpable!(true);
    createRuntime({ hostDumpable: true });
    expect(binding.dumpable!()).toBe(1);
    createRuntime({});
    expect(binding.dumpable!()).toBe(0);
  });

  it("a malformed hostDumpable is a TypeError, and the flag is not touched", () => {
    binding.setDumpable!(true);
    expect(() => createRuntime({ hostDumpable: "no" as unknown as boolean })).toThrow(
      /options\.hostDumpable must be a boolean/,
    );
    expect(binding.dumpable!()).toBe(1);
  });
});
