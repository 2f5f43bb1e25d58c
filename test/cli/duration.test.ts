/**
 * Durations on the command line (issue 39, item 3): `run --timeout` was a
 * bare number of seconds while the API's `timeout` is milliseconds, and a
 * newcomer wrote `--timeout 30000` for 30 s (it meant 8 h 20 min). Units are
 * accepted now, a bare number stays seconds, and a bare number of 1000 or
 * more is refused with the spelling probably meant.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  formatDuration,
  IMPLAUSIBLE_BARE_SECONDS,
  MAX_DURATION_MS,
  parseDuration,
} from "../../src/cli/duration.js";
import { isUsageError } from "../../src/cli/usage-error.js";

function refusal(text: string): string {
  try {
    parseDuration(text, "--timeout");
  } catch (error) {
    expect(isUsageError(error)).toBe(true);
    return (error as Error).message;
  }
  throw new Error(`${text} was accepted`);
}

describe("parseDuration", () => {
  it("reads the units and a bare number as seconds", () => {
    expect(parseDuration("300ms", "--timeout")).toBe(300);
    expect(parseDuration("1.5s", "--timeout")).toBe(1500);
    expect(parseDuration("2m", "--timeout")).toBe(120_000);
    expect(parseDuration("1h", "--timeout")).toBe(3_600_000);
    expect(parseDuration("0.3", "--timeout")).toBe(300);
    expect(parseDuration(".5", "--timeout")).toBe(500);
    expect(parseDuration("999", "--timeout")).toBe(999_000);
    expect(parseDuration(" 30 ", "--timeout")).toBe(30_000);
    expect(parseDuration("30000ms", "--timeout")).toBe(30_000);
    expect(parseDuration("30000s", "--timeout")).toBe(30_000_000);
  });

  it("refuses a bare number of 1000 or more with the spelling probably meant", () => {
    expect(refusal("30000")).toBe(
      "--timeout 30000: a bare number is seconds (8 h 20 min); did you mean 30000ms? " +
        "Write 30000ms, or 30000s for seconds",
    );
    expect(refusal(String(IMPLAUSIBLE_BARE_SECONDS))).toMatch(/did you mean 1000ms\?/);
  });

  it("refuses what is not a positive duration, naming the option and the accepted forms", () => {
    for (const text of ["", "soon", "-1", "0", "0s", "1e3", "5 s", "5sec", "2d", "1.5.2s", "NaN"]) {
      const message = refusal(text);
      expect(message, text).toMatch(/^--timeout /);
    }
    expect(refusal("-1")).toBe(
      "--timeout expects a positive duration (300ms, 1.5s, 2m, 1h; a bare number is seconds)",
    );
    expect(refusal("0.4ms")).toBe("--timeout expects a duration of at least 1ms");
    expect(refusal("597h")).toMatch(/over the longest duration, 2147483647ms/);
  });

  it("every unit agrees with every other (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 500 }), (n) => {
        expect(parseDuration(`${n}h`, "-t")).toBe(parseDuration(`${n * 60}m`, "-t"));
        expect(parseDuration(`${n}m`, "-t")).toBe(parseDuration(`${n * 60}s`, "-t"));
        expect(parseDuration(`${n}s`, "-t")).toBe(parseDuration(`${n * 1000}ms`, "-t"));
        if (n < IMPLAUSIBLE_BARE_SECONDS) {
          expect(parseDuration(String(n), "-t")).toBe(parseDuration(`${n}s`, "-t"));
        }
      }),
    );
  });

  it("accepts up to the longest timer and no further", () => {
    expect(parseDuration(`${MAX_DURATION_MS}ms`, "-t")).toBe(MAX_DURATION_MS);
    expect(() => parseDuration(`${MAX_DURATION_MS + 1}ms`, "-t")).toThrow(/longest/);
  });
});

describe("formatDuration", () => {
  it("always writes the unit", () => {
    expect(formatDuration(300)).toBe("300 ms");
    expect(formatDuration(1500)).toBe("1.5 s");
    expect(formatDuration(150_000)).toBe("2 min 30 s");
    expect(formatDuration(30_000_000)).toBe("8 h 20 min");
    expect(formatDuration(3_600_000)).toBe("1 h");
  });
});
