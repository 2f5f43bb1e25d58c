/**
 * pipeEnd under Bun (src/spawn/native-engine.ts): a read end is Bun's own
 * file stream, whose reader leaves the fd open, so the engine closes it
 * itself once the stream is done — else every captured Bun spawn leaks one
 * descriptor per stream. Bun is stood in for by a fake `Bun.file(fd)`
 * (this suite runs under Node); the real Bun runs in test/runtimes.test.ts
 * where it is installed.
 *
 * Seen red with the close on the stream's end removed (row bun-read-end-closed).
 */
import type { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { pipeEnd } from "../../src/spawn/native-engine.js";

const globals = globalThis as { Bun?: unknown };
afterEach(() => {
  delete globals.Bun;
});

function fakeBun(chunks: string[]): number[] {
  const opened: number[] = [];
  globals.Bun = {
    file(fd: number) {
      opened.push(fd);
      return {
        stream: () =>
          new ReadableStream<Uint8Array>({
            start(controller) {
              for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
              controller.close();
            },
          }),
      };
    },
  };
  return opened;
}

describe("a read end under Bun", () => {
  it("is Bun's file stream, and its fd is closed once, when the stream is done", async () => {
    const opened = fakeBun(["ab", "c"]);
    const closed: number[] = [];
    const stream = pipeEnd(41, 1, (fd) => closed.push(fd), true) as Readable;
    expect(opened).toEqual([41]);
    const done = new Promise((resolve) => stream.once("close", resolve));
    let text = "";
    for await (const chunk of stream) text += String(chunk);
    await done;
    expect(text).toBe("abc");
    expect(closed).toEqual([41]);
  });

  it("is closed when the engine destroys the stream early too", async () => {
    fakeBun(["never read"]);
    const closed: number[] = [];
    const stream = pipeEnd(42, 2, (fd) => closed.push(fd), true) as Readable;
    const done = new Promise((resolve) => stream.once("close", resolve));
    stream.destroy();
    await done;
    expect(closed).toEqual([42]);
  });
});
