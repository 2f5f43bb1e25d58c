/**
 * Line iteration (`for await (const line of subprocess)`, `lines("stderr")`)
 * on the engine of the vitest project: the native addon, or the fallback
 * (EXACTSPAWN_NATIVE=0). What the child writes is the oracle; a slow child is
 * paced by files the test creates (events, never sleeps).
 *
 * Each control was seen to fail with it removed from line-iterator.ts, on
 * both engines: the "\r" strip, the last line without "\n", the snapshot of
 * output read before the iteration, and the drain after an early break (the
 * child then blocks on its full pipe and the test times out).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawn } from "../../src/index.js";
import { eventually } from "../fixtures/process-state.js";

const native = process.env["EXACTSPAWN_NATIVE"] !== "0";
const dir = mkdtempSync(join(tmpdir(), "exactspawn-lines-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let flags = 0;
const flag = () => join(dir, `flag-${flags++}`);
const waitFor = (path: string) => `until [ -e '${path}' ]; do sleep 0.01; done`;

async function collect(lines: AsyncIterable<string>): Promise<string[]> {
  const seen: string[] = [];
  for await (const line of lines) seen.push(line);
  return seen;
}

describe(`line iteration (${native ? "native" : "fallback"} engine)`, () => {
  it("yields stdout's lines: \\r\\n endings, empty lines, a last line without newline", async () => {
    const child = spawn("/bin/sh", ["-c", "printf 'one\\r\\n\\ntwo\\nthree\\r\\nlast'"]);
    expect(await collect(child)).toEqual(["one", "", "two", "three", "last"]);
    const result = await child;
    expect(result.native).toBe(native);
    // Iterating leaves the captured result whole.
    expect(result.stdout).toBe("one\r\n\ntwo\nthree\r\nlast");
  });

  it("gives each line while the child runs: the child waits for the test to see it", async () => {
    const gates = [flag(), flag(), flag()];
    const script = gates.map((g, i) => `echo line${i}; ${waitFor(g)}`).join("; ");
    const child = spawn("/bin/sh", ["-c", script]);
    const seen: string[] = [];
    for await (const line of child) {
      seen.push(line);
      // The child cannot go on (nor exit) until this line was seen here.
      writeFileSync(gates[seen.length - 1]!, "");
    }
    expect(seen).toEqual(["line0", "line1", "line2"]);
    expect((await child).exitCode).toBe(0);
  });

  it("iterates stderr with lines('stderr'), stdout untouched", async () => {
    const child = spawn("/bin/sh", ["-c", "echo out; echo e1 >&2; printf 'e2' >&2"]);
    expect(await collect(child.lines("stderr"))).toEqual(["e1", "e2"]);
    expect(await child).toMatchObject({ stdout: "out\n", stderr: "e1\ne2" });
  });

  it("starts from the first line even when output was read before the iteration", async () => {
    // Most of 100,000 lines (about 600 KB) must have been read by this process
    // before `written` exists: far more than a pipe or socket buffer holds.
    const written = flag();
    const go = flag();
    const child = spawn("/bin/sh", [
      "-c",
      `seq 1 100000; : > '${written}'; ${waitFor(go)}; echo end`,
    ]);
    expect(await eventually(() => existsSync(written))).toBe(true);
    const lines = child.lines();
    writeFileSync(go, "");
    const seen = await collect(lines);
    expect(seen).toHaveLength(100_001);
    expect(seen.slice(0, 2)).toEqual(["1", "2"]);
    expect(seen.slice(-2)).toEqual(["100000", "end"]);
  });

  it("streams a large output with buffer: false, keeping none of it in the result", async () => {
    const child = spawn("/bin/sh", ["-c", "seq 1 300000"], { buffer: false });
    let count = 0;
    let last = "";
    for await (const line of child) {
      count++;
      last = line;
    }
    expect([count, last]).toEqual([300_000, "300000"]);
    expect(await child).toMatchObject({ exitCode: 0, stdout: null });
  });

  it("leaving the loop early does not block the child on a full pipe", async () => {
    const child = spawn("/bin/sh", ["-c", "seq 1 1000000"], { buffer: false });
    const firstThree: string[] = [];
    for await (const line of child) {
      firstThree.push(line);
      if (firstThree.length === 3) break;
    }
    expect(firstThree).toEqual(["1", "2", "3"]);
    // The rest (about 6.9 MB) is drained, so seq finishes and exits 0.
    expect(await child).toMatchObject({ exitCode: 0, signal: null });
  });

  it("decodes with the run's encoding, across chunk boundaries", async () => {
    // "é" in UTF-8 is C3 A9: the child writes one byte, waits, writes the other.
    const go = flag();
    const child = spawn("/bin/sh", ["-c", `printf 'caf\\303'; ${waitFor(go)}; printf '\\251\\n'`]);
    const lines = child.lines();
    const first = lines.next();
    writeFileSync(go, "");
    expect(await first).toEqual({ done: false, value: "café" });
    const latin1 = spawn("/bin/sh", ["-c", "printf 'caf\\351\\n'"], { encoding: "latin1" });
    expect(await collect(latin1)).toEqual(["café"]);
    // encoding "buffer": lines are UTF-8 text.
    const bytes = spawn("/bin/sh", ["-c", "printf 'caf\\303\\251'"], { encoding: "buffer" });
    expect(await collect(bytes)).toEqual(["café"]);
  });

  it("refuses a stream that is not a pipe and an unknown stream name", () => {
    const child = spawn("/bin/true", [], { stdio: ["ignore", "pipe", "ignore"] });
    expect(() => child.lines("stderr")).toThrow(TypeError);
    expect(() => child.lines("stdin" as "stdout")).toThrow(TypeError);
    return child.result;
  });

  it("rejects with the spawn error when nothing started", async () => {
    const iteration = collect(spawn(join(dir, "missing"), []));
    await expect(iteration).rejects.toMatchObject({ code: "ENOENT" });
  });
});
