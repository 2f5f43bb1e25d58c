/**
 * Output larger than a Buffer or a string can hold still settles the run
 * (issue 11, bug 4, and the ERR_STRING_TOO_LONG half of bug 2): maxBuffer is
 * clamped to what the result can hold, and a conversion that fails anyway is
 * the run's error. The real multi-GiB run is `node scripts/huge-output.mjs`.
 */
import { Buffer, constants } from "node:buffer";
import { describe, expect, it } from "vitest";
import { NO_ENDING } from "../../src/spawn/deadline-plan.js";
import type { Engine, EngineChild, EngineExit } from "../../src/spawn/engine.js";
import { outputLimit } from "../../src/spawn/output-limit.js";
import { Subprocess } from "../../src/spawn/subprocess.js";

const STRING_ENCODINGS = [
  "utf8",
  "latin1",
  "ascii",
  "hex",
  "base64",
  "base64url",
  "utf16le",
] as const satisfies readonly BufferEncoding[];

describe("outputLimit", () => {
  it("leaves a limit that fits alone", () => {
    for (const encoding of [...STRING_ENCODINGS, "buffer"] as const) {
      expect(outputLimit(4096, encoding)).toBe(4096);
    }
  });

  it("clamps to buffer.constants.MAX_LENGTH for Buffers", () => {
    expect(outputLimit(Number.POSITIVE_INFINITY, "buffer")).toBe(constants.MAX_LENGTH);
  });

  // The oracle is Node's own decoder: characters per byte measured on bytes
  // that decode to the most characters (0xff: one U+FFFD per byte in UTF-8).
  it.each(STRING_ENCODINGS)(
    "%s: the clamped bytes decode to at most MAX_STRING_LENGTH characters, 3 more bytes would not",
    (encoding) => {
      const sample = Buffer.alloc(3 * 1024, 0xff);
      const perByte = sample.toString(encoding).length / sample.length;
      const limit = outputLimit(Number.POSITIVE_INFINITY, encoding);
      expect(limit).toBeLessThanOrEqual(constants.MAX_LENGTH);
      expect(limit * perByte).toBeLessThanOrEqual(constants.MAX_STRING_LENGTH);
      expect(
        (limit + 3) * perByte > constants.MAX_STRING_LENGTH || limit === constants.MAX_LENGTH,
      ).toBe(true);
    },
  );
});

describe("a captured output that cannot be decoded", () => {
  it("settles the run with ERR_STRING_TOO_LONG instead of throwing in the exit callback", async () => {
    const tooLong = Buffer.from("x");
    tooLong.toString = () => {
      throw Object.assign(new Error("Cannot create a string longer than 0x1fffffe8 characters"), {
        code: "ERR_STRING_TOO_LONG",
      });
    };
    const engine: Engine = {
      native: true,
      start(_request, onExit): EngineChild {
        const exit: EngineExit = {
          exitCode: 0,
          signal: null,
          resourceUsage: null,
          output: [null, tooLong],
        };
        setImmediate(() => onExit(exit));
        return {
          pid: 4242,
          streams: [null, null, null],
          captured: [1],
          takeOver: () => null,
          kill: () => 0,
          killGroup: () => 0,
          endNow: () => NO_ENDING,
          ending: () => null,
          endCaptureAtExit: () => {},
          ref: () => {},
          unref: () => {},
        };
      },
    };
    const run = new Subprocess(
      engine,
      {
        file: "/bin/true",
        argv: ["true"],
        entries: [],
        cwd: undefined,
        stdio: ["ignore", "pipe", "ignore"],
        setsid: false,
        setpgroup: false,
        capture: { slots: [1], maxBuffer: 1024 },
      },
      {
        encoding: "utf8",
        buffer: true,
        maxBuffer: 1024,
        timeout: undefined,
        killSignal: 15,
        killGraceMs: 0,
        signal: undefined,
        reject: true,
        input: undefined,
        ownGroup: false,
        ref: true,
      },
    );
    // Before the fix: the exception escaped the exit callback and the run never settled.
    await expect(run.result).rejects.toMatchObject({ code: "ERR_STRING_TOO_LONG" });
  }, 10_000);
});
