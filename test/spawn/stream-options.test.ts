/**
 * The policy of streams between steps, without a child: which values
 * `input` and `stdio` take (spawn-options.ts), which pipe end a slot gets and
 * when the host's copy is closed (kernel-pipe.ts, driven with fake fds and a
 * recording close), how a stream input is fed (stream-input.ts, into a
 * Writable that stands for the child's stdin), and what a capture's views
 * carry (output-capture.ts).
 */
import { Buffer } from "node:buffer";
import { closeSync, fstatSync, readdirSync, readSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { PassThrough, Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { FallbackUnsupportedError } from "../../src/spawn/fallback-engine.js";
import { fifoPipe } from "../../src/spawn/fifo-pipe.js";
import { KernelPipe, releasePipeEnds } from "../../src/spawn/kernel-pipe.js";
import { OutputCapture } from "../../src/spawn/output-capture.js";
import { normalizeOptions } from "../../src/spawn/spawn-options.js";
import {
  feedInput,
  InputChunkError,
  StreamInput,
  streamInput,
} from "../../src/spawn/stream-input.js";
import { BASH_STEP_OPTION_KEYS } from "../../src/step/bash-options.js";
import { RUNTIME_SPAWN_OPTION_KEYS } from "../../src/step/runtime-spawn.js";
import { fakeStdin } from "../helpers/fake-stdin.js";

function fakePipe(): { pipe: KernelPipe; closed: number[] } {
  const closed: number[] = [];
  return { pipe: new KernelPipe([40, 41], (fd) => closed.push(fd)), closed };
}

describe("a kernel pipe in stdio", () => {
  it("gives its read end to stdin and its write end to stdout and stderr", () => {
    const { pipe } = fakePipe();
    expect(normalizeOptions({ stdio: [pipe, "pipe", "pipe"] }).stdio).toEqual([40, "pipe", "pipe"]);
    expect(normalizeOptions({ stdio: ["ignore", pipe, pipe] }).stdio).toEqual(["ignore", 41, 41]);
  });

  it("is refused beyond slot 2, once its end is gone, and beside input", () => {
    const { pipe } = fakePipe();
    expect(() => normalizeOptions({ stdio: ["ignore", "pipe", "pipe", pipe] })).toThrow(
      /stdio\[3\] may be a pipe only in slots 0-2/,
    );
    expect(() => normalizeOptions({ stdio: [pipe], input: "x" })).toThrow(
      /input needs stdin to be a pipe/,
    );
    releasePipeEnds([pipe]);
    expect(() => normalizeOptions({ stdio: [pipe] })).toThrow(
      /stdio\[0\] is a pipe whose read end was already given to a child, or closed/,
    );
    expect(normalizeOptions({ stdio: ["ignore", pipe] }).stdio[1]).toBe(41);
  });

  it("closes the host's copy of each end given, once, and nothing else", () => {
    const { pipe, closed } = fakePipe();
    releasePipeEnds(["ignore", pipe, pipe, pipe]);
    expect(closed).toEqual([41]);
    expect(pipe.writeHeld).toBe(false);
    expect(pipe.readHeld).toBe(true);
    releasePipeEnds([pipe, pipe]);
    releasePipeEnds("pipe");
    releasePipeEnds(undefined);
    expect(closed).toEqual([41, 40]);
    pipe.close();
    expect(closed).toEqual([41, 40]);
    const other = fakePipe();
    other.pipe.close();
    other.pipe.close();
    expect(other.closed).toEqual([40, 41]);
  });
});

describe("the pipe the fallback makes (a FIFO)", () => {
  const leftovers = () => readdirSync(tmpdir()).filter((n) => n.startsWith("exactspawn-pipe-"));

  it("gives the two ends of one pipe, blocking, and leaves no name behind", () => {
    const [read, write] = fifoPipe();
    try {
      expect(fstatSync(read).isFIFO()).toBe(true);
      expect(fstatSync(write).ino).toBe(fstatSync(read).ino);
      writeSync(write, "through");
      closeSync(write);
      const buffer = Buffer.alloc(16);
      expect(buffer.subarray(0, readSync(read, buffer)).toString()).toBe("through");
      // The writer is gone: EOF (0), not EAGAIN, so the end is blocking.
      expect(readSync(read, buffer)).toBe(0);
    } finally {
      closeSync(read);
    }
    expect(leftovers()).toEqual([]);
  });

  it("is refused loud, naming mkfifo, when it is not on PATH", () => {
    const path = process.env["PATH"];
    process.env["PATH"] = "/nonexistent";
    try {
      expect(() => fifoPipe()).toThrow(FallbackUnsupportedError);
      expect(() => fifoPipe()).toThrow(/needs mkfifo\(1\): it is not on PATH/);
    } finally {
      process.env["PATH"] = path;
    }
    expect(leftovers()).toEqual([]);
  });
});

describe("input as a stream", () => {
  it("takes a Node Readable, a web ReadableStream and (async) iterables; strings and bytes stay whole", () => {
    async function* generated() {
      yield "x";
    }
    for (const value of [
      Readable.from(["x"]),
      new ReadableStream(),
      generated(),
      ["x", Buffer.from("y")],
      new Set(["x"]),
    ]) {
      expect(normalizeOptions({ input: value as never }).input).toBeInstanceOf(StreamInput);
    }
    expect(normalizeOptions({ input: "text" }).input).toBe("text");
    expect(Buffer.isBuffer(normalizeOptions({ input: new Uint8Array([1]) }).input)).toBe(true);
    expect(streamInput("text")).toBeUndefined();
    expect(streamInput(new Uint8Array(2))).toBeUndefined();
  });

  it.each([[{}], [5], [null], [{ read() {} }], [new Uint16Array(2)]])(
    "refuses %j as input with a TypeError",
    (input) => {
      expect(() => normalizeOptions({ input: input as never })).toThrow(
        /options\.input must be a string, a Uint8Array, a stream or an \(async\) iterable/,
      );
    },
  );

  it("is one entry of the one option table: runtime.bash and runtime.spawn take it", () => {
    expect(BASH_STEP_OPTION_KEYS.has("input")).toBe(true);
    expect(RUNTIME_SPAWN_OPTION_KEYS.has("input")).toBe(true);
  });
});

describe("feedInput", () => {
  it("takes the next chunk only when stdin has room, and ends stdin at the end", async () => {
    const { stdin, got } = fakeStdin(4);
    let pulled = 0;
    let inFlightMost = 0;
    function* source() {
      for (let i = 0; i < 50; i++) {
        pulled++;
        inFlightMost = Math.max(inFlightMost, pulled - got.length);
        yield Buffer.from([i, i, i, i]);
      }
    }
    await feedInput(new StreamInput(source()), stdin);
    expect(Buffer.concat(got)).toEqual(
      Buffer.concat(Array.from({ length: 50 }, (_, i) => Buffer.from([i, i, i, i]))),
    );
    expect(stdin.writableEnded).toBe(true);
    expect(inFlightMost).toBeLessThanOrEqual(2);
  });

  it("stops quietly and returns the source when stdin closes early", async () => {
    const stdin = new PassThrough({ highWaterMark: 1 });
    let returned = false;
    function* source() {
      try {
        for (;;) yield "more";
      } finally {
        returned = true;
      }
    }
    const fed = feedInput(new StreamInput(source()), stdin);
    setImmediate(() => stdin.destroy());
    await expect(fed).resolves.toBeUndefined();
    expect(returned).toBe(true);
  });

  it("rejects with the source's error, or an InputChunkError naming only the chunk's type", async () => {
    const broken = new Error("broken");
    async function* failing() {
      yield "a";
      throw broken;
    }
    await expect(feedInput(new StreamInput(failing()), new PassThrough())).rejects.toBe(broken);
    const wrong = feedInput(new StreamInput(["a", { secret: "v" }]), new PassThrough());
    await expect(wrong).rejects.toBeInstanceOf(InputChunkError);
    await expect(wrong).rejects.toThrow(
      "options.input yielded a chunk of type object, not a string",
    );
  });
});

describe("a capture's views", () => {
  it("carry every byte from the first, whenever they are made, and end with the capture", async () => {
    const source = new PassThrough();
    const capture = new OutputCapture(source, 1000, () => {}, Buffer.from("engine:"));
    source.write("one,");
    await new Promise((resolve) => setImmediate(resolve));
    const early = capture.view();
    source.write("two");
    await new Promise((resolve) => setImmediate(resolve));
    const late = capture.view();
    source.end();
    const read = async (stream: Readable) => {
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString();
    };
    expect(await read(early)).toBe("engine:one,two");
    expect(await read(late)).toBe("engine:one,two");
    expect(await read(capture.view())).toBe("engine:one,two");
    expect(capture.value("utf8")).toBe("engine:one,two");
  });
});
