/**
 * The stdio plan (native/core/stdio_plan.cc), the one setup both spawn paths
 * run, checked as a pure function: its steps are replayed on a model fd
 * table (every fd of the parent starts close-on-exec, as Node's 0-2 do) and
 * the result must be exactly the requested slots, each pointing at its
 * source (or /dev/null), inheritable, with nothing else open. The real
 * children's fds are checked in test/spawn/stdio-setup.test.ts.
 */
import { execFileSync } from "node:child_process";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { stdioPlanDriver } from "../fixtures/build.js";

let driver: string;
beforeAll(() => {
  driver = stdioPlanDriver();
});

function plans(inputs: readonly (readonly number[])[]): string[] {
  const text = execFileSync(driver, { input: inputs.map((s) => `${s.join(" ")}\n`).join("") });
  return text.toString().trimEnd().split("\n");
}

interface Entry {
  file: string;
  cloexec: boolean;
}

/** Replays a plan; returns the final table, or the reason a step was impossible. */
function replay(stdio: readonly number[], plan: string): Map<number, Entry> | string {
  const table = new Map<number, Entry>();
  for (const source of stdio) {
    if (source >= 0) table.set(source, { file: `parent:${source}`, cloexec: true });
  }
  for (const step of plan.split(" ")) {
    const op = step[0];
    if (op === "D") {
      const [from, to] = step.slice(1).split(">").map(Number) as [number, number];
      const entry = table.get(from);
      if (entry === undefined) return `dup2 from closed fd ${from}`;
      table.set(to, { file: entry.file, cloexec: false });
    } else if (op === "K") {
      const fd = Number(step.slice(1));
      const entry = table.get(fd);
      if (entry === undefined) return `keep of closed fd ${fd}`;
      entry.cloexec = false;
    } else if (op === "N") {
      table.set(Number(step.slice(1)), { file: "/dev/null", cloexec: false });
    } else if (op === "C") {
      const from = Number(step.slice(1));
      for (const fd of [...table.keys()]) if (fd >= from) table.delete(fd);
    } else {
      return `unexpected step ${step}`;
    }
  }
  return table;
}

function wanted(stdio: readonly number[]): Map<number, Entry> {
  return new Map(
    stdio.map((source, fd) => [
      fd,
      { file: source < 0 ? "/dev/null" : `parent:${source}`, cloexec: false },
    ]),
  );
}

describe("plan_stdio", () => {
  it("parks every low source that is not its own slot, above every slot and source", () => {
    expect(
      plans([
        [2, 0, 1],
        [-1, -1, -1],
        [0, 1, 2],
        [7, 7, 1],
      ]),
    ).toEqual([
      "D2>3 D0>4 D1>5 D3>0 D4>1 D5>2 C3",
      "N0 N1 N2 C3",
      "K0 K1 K2 C3",
      "D1>8 D7>0 D7>1 D8>2 C3",
    ]);
  });

  it("refuses a slot count or a parking place that is no fd", () => {
    expect(plans([[2147483647, 0, 1]])).toEqual(["E9"]);
  });

  it("any stdio array: exactly the slots, each from its source, inheritable, nothing else", () => {
    const stdio = fc.array(fc.integer({ min: -1, max: 9 }), { minLength: 3, maxLength: 8 });
    fc.assert(
      fc.property(fc.array(stdio, { minLength: 50, maxLength: 50 }), (inputs) => {
        const output = plans(inputs);
        inputs.forEach((input, i) => {
          expect(replay(input, output[i]!)).toEqual(wanted(input));
        });
      }),
      { numRuns: 20 },
    );
  });
});
