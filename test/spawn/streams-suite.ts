/**
 * Streams between the host and its children, and between two children
 * (issue 29, item 8), run on the native engine and on the child_process
 * fallback (each in its own test file and process):
 * - `input` as a Node Readable, a web ReadableStream or an (async)
 *   iterable: byte-identical (binary, over 1 MiB), with backpressure (the
 *   source is pulled only as the child reads), EPIPE quiet, a failing
 *   source ends the run with failure "input";
 * - stdout/stderr/stdin on a bash step's handle and a spawn: the stream and
 *   the result both see every byte; `buffer: false` holds the child back
 *   for a slow reader instead of queueing in the host;
 * - createPipe(): one kernel pipe between two steps, the bytes never in
 *   this process (the same pipe inode in both children, none in the host),
 *   EOF and SIGPIPE as in a shell pipeline (the fallback's pipe is a FIFO,
 *   unlinked before createPipe returns).
 */
import { Buffer } from "node:buffer";
import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import {
  cgroupSupport,
  createPipe,
  createRuntime,
  InputChunkError,
  SubprocessError,
  spawn,
  spawnSync,
} from "../../src/index.js";
import { eventually } from "../fixtures/process-state.js";
import { errorText, makeRootFactory, rejection } from "../helpers/steps.js";

const MIB = 1024 * 1024;
const CHUNK = 64 * 1024;

function sha256(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

/** The pipe a process's fd refers to ("pipe:[inode]"), or the link text. */
function fdLink(pid: number | "self", fd: number): string {
  return readlinkSync(`/proc/${pid}/fd/${fd}`);
}

/** Every fd of this process that refers to `link`. */
function hostFdsOn(link: string): number[] {
  const fds: number[] = [];
  for (const name of readdirSync("/proc/self/fd")) {
    try {
      if (readlinkSync(`/proc/self/fd/${name}`) === link) fds.push(Number(name));
    } catch {
      // closed while listing (the listing's own fd)
    }
  }
  return fds;
}

/**
 * Bytes this process's own threads have read so far (rchar of each task:
 * /proc/self/io would add what reaped children read).
 */
function hostReadBytes(): number {
  let total = 0;
  for (const task of readdirSync("/proc/self/task")) {
    try {
      const line = readFileSync(`/proc/self/task/${task}/io`, "utf8")
        .split("\n")
        .find((l) => l.startsWith("rchar:"));
      total += Number(line?.split(/\s+/)[1] ?? 0);
    } catch {
      // a thread that ended while listing
    }
  }
  return total;
}

export function streamsSuite(mode: "native" | "fallback"): void {
  const native = mode === "native";
  const { root, removeRoots } = makeRootFactory();
  afterAll(removeRoots);
  const runtime = createRuntime({ parentEnv: { PATH: process.env["PATH"] ?? "" } });

  describe(`streaming input (${mode})`, () => {
    const data = randomBytes(3 * MIB + 17);

    it("writes a Node Readable byte for byte (binary, 3 MiB) and closes stdin at its end", async () => {
      const result = await spawn("/bin/cat", [], {
        input: Readable.from([data.subarray(0, MIB), data.subarray(MIB)]),
        encoding: "buffer",
      });
      expect(result.native).toBe(native);
      expect(sha256(result.stdout)).toBe(sha256(data));
    });

    it("writes a web ReadableStream, and an async iterable of strings and bytes mixed", async () => {
      const web = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(data.subarray(0, 1000));
          controller.enqueue(new Uint8Array(data.subarray(1000)));
          controller.close();
        },
      });
      const fromWeb = await spawn("/bin/cat", [], { input: web, encoding: "buffer" });
      expect(fromWeb.stdout.equals(data)).toBe(true);
      async function* mixed() {
        yield "héllo ";
        yield new Uint8Array([0, 255, 10]);
        yield Buffer.from("end");
      }
      const fromIterable = await spawn("/bin/cat", [], { input: mixed(), encoding: "buffer" });
      expect(fromIterable.stdout).toEqual(
        Buffer.concat([Buffer.from("héllo "), Buffer.from([0, 255, 10]), Buffer.from("end")]),
      );
    });

    it("takes a stream input on runtime.bash and runtime.spawn (the one option table)", async () => {
      const step = await runtime.bash("wc -c", { input: Readable.from([data]) });
      expect(step.output).toBe(String(data.length));
      const child = await runtime.spawn("/bin/cat", [], {
        input: [data.subarray(0, 10), data.subarray(10)],
        encoding: "buffer",
      });
      expect(child.stdout.equals(data)).toBe(true);
    });

    it("pulls the source only as the child reads (backpressure), and a child that stops early is no error", async () => {
      // 1,024 chunks of 64 KiB are on offer; the child reads 1 MiB and exits.
      // Pulled without waiting for room, the whole 64 MiB would be taken.
      let pulled = 0;
      let returned = false;
      function* source() {
        try {
          for (let i = 0; i < 1024; i++) {
            pulled++;
            yield Buffer.alloc(CHUNK, i & 0xff);
          }
        } finally {
          returned = true;
        }
      }
      const result = await spawn("/bin/sh", ["-c", `head -c ${MIB} > /dev/null; echo read`], {
        input: source(),
      });
      expect(result).toMatchObject({ exitCode: 0, stdout: "read\n", failure: null });
      // 16 chunks were read; the pipe, the socket's buffer and one in flight hold a few more.
      expect(pulled).toBeLessThan(64);
      // The feeding stopped at stdin's close, and returned the source.
      expect(await eventually(() => returned)).toBe(true);
    });

    it('ends the run with failure "input" when the source fails, the error as cause and no value in the message', async () => {
      const secret = "sk-input-secret-4242";
      async function* failing() {
        yield "first line\n";
        throw new Error(`upstream broke: ${secret}`);
      }
      const error = await rejection(spawn("/bin/cat", [], { input: failing() }).result);
      expect(SubprocessError.is(error)).toBe(true);
      const failure = error as SubprocessError;
      expect(failure.failure).toBe("input");
      expect(failure.message).toContain("input stream failed");
      expect(failure.message).not.toContain(secret);
      expect((failure.cause as Error).message).toContain(secret);
      // cat was ended by the kill signal, not by an EOF that would look like success.
      expect(failure.signal).toBe("SIGTERM");
      const resolved = await spawn("/bin/cat", [], {
        input: Readable.from(failing()),
        reject: false,
      });
      expect(resolved.failure).toBe("input");
    });

    it("ends the run when the source yields something that is neither text nor bytes", async () => {
      // A sentinel no duration or timestamp in the error can spell by chance (42 could: a
      // durationMs of 2.074326000000042 did).
      const sentinel = -97531.8643;
      const error = await rejection(
        spawn("/bin/cat", [], { input: [Buffer.from("ok"), sentinel] as never }).result,
      );
      expect((error as SubprocessError).failure).toBe("input");
      expect((error as Error).cause).toBeInstanceOf(InputChunkError);
      expect(errorText(error)).not.toContain(String(sentinel));
    });

    it("refuses what is not an input, and a stream on spawnSync, with a TypeError naming the option", () => {
      expect(() => spawn("/bin/cat", [], { input: { length: 3 } as never })).toThrow(
        /options\.input must be/,
      );
      expect(() => spawnSync("/bin/cat", [], { input: Readable.from(["x"]) as never })).toThrow(
        /spawnSync: options\.input .*a stream needs spawn/,
      );
    });
  });

  describe(`stream access on the handle (${mode})`, () => {
    it("gives a bash step's stdout as a stream of every byte, and the result keeps them too (binary, 2 MiB)", async () => {
      const handle = runtime.bash(`head -c ${2 * MIB} /dev/urandom; echo err >&2`, {
        encoding: "buffer",
      });
      const [streamed, result] = await Promise.all([readAll(handle.stdout!), handle]);
      expect(streamed.length).toBe(2 * MIB);
      expect(Buffer.isBuffer(result.stdout)).toBe(true);
      expect(streamed.equals(result.stdout as Buffer)).toBe(true);
      expect((await readAll(handle.stderr!)).toString()).toBe("err\n");
      // First touched after the run, a step's stream still carries every byte.
      const late = runtime.bash("printf 'late\\n'; head -c 100000 /dev/zero");
      const lateResult = await late;
      expect((await readAll(late.stdout!)).toString()).toBe(lateResult.stdout);
      expect(lateResult.stdout).toHaveLength(100005);
    });

    it("writes to a step's stdin when its stdio[0] is a pipe; no stdin when input is given", async () => {
      const handle = runtime.bash("tr a-z A-Z", { stdio: ["pipe", "pipe", "pipe"] });
      handle.stdin!.write("hello ");
      handle.stdin!.end("world");
      expect((await handle).output).toBe("HELLO WORLD");
      const given = runtime.bash("cat", { input: "x" });
      expect(given.stdin).toBeNull();
      await given;
      expect(runtime.bash("true").stdin).toBeNull();
    });

    it("with buffer: false, a slow reader holds the child back instead of the host queueing its output", async () => {
      const total = 32 * MIB;
      const child = spawn("head", ["-c", String(total), "/dev/zero"], { buffer: false });
      let received = 0;
      let mostHeld = 0;
      for await (const chunk of child.stdout!) {
        // What the host held for this reader: the chunk (a read takes all that is
        // queued) and what is still queued behind it.
        mostHeld = Math.max(mostHeld, (chunk as Buffer).length + child.stdout!.readableLength);
        received += (chunk as Buffer).length;
        // A slow reader: eight event-loop turns per chunk (the loop reads a pipe once a turn).
        for (let turn = 0; turn < 8; turn++) await new Promise((resolve) => setImmediate(resolve));
      }
      const result = await child;
      expect(received).toBe(total);
      expect(mostHeld).toBeLessThanOrEqual(256 * 1024);
      expect(result.stdout).toBeNull();
    });
  });

  describe(`a kernel pipe between two steps (${mode})`, () => {
    it("carries the producer's bytes to the consumer exactly (binary, 3 MiB)", async () => {
      const dir = root();
      const file = join(dir, "data");
      const data = randomBytes(3 * MIB + 5);
      writeFileSync(file, data);
      const pipe = createPipe();
      const producer = runtime.bash(`cat ${JSON.stringify(file)}`, {
        stdio: ["ignore", pipe, "pipe"],
      });
      const consumer = runtime.bash("sha256sum", { stdio: [pipe, "pipe", "pipe"] });
      const [made, used] = await Promise.all([producer, consumer]);
      expect(made.stdout).toBeNull();
      expect(made.exitCode).toBe(0);
      expect(used.output.split(" ")[0]).toBe(sha256(data));
    });

    it("passes the bytes through one pipe the host no longer holds: none reaches this process", async () => {
      const total = 200 * MIB;
      const pipe = createPipe();
      const before = hostReadBytes();
      const producer = runtime.bash(`exec head -c ${total} /dev/zero`, {
        stdio: ["ignore", pipe, "pipe"],
      });
      expect(pipe.writeHeld).toBe(false);
      expect(pipe.readHeld).toBe(true);
      const consumer = runtime.bash("exec wc -c", { stdio: [pipe, "pipe", "pipe"] });
      expect(pipe.readHeld).toBe(false);
      // Both children hold the same pipe; the host holds no end of it.
      const link = fdLink(consumer.pid!, 0);
      // A pipe, or on the fallback a FIFO whose name is already gone.
      expect(link).toMatch(native ? /^pipe:\[\d+\]$/ : /\/fifo \(deleted\)$/);
      expect(fdLink(producer.pid!, 1)).toBe(link);
      expect(hostFdsOn(link)).toEqual([]);
      const [, counted] = await Promise.all([producer, consumer]);
      expect(counted.output).toBe(String(total));
      // 200 MiB went through; this process read a small fraction of that meanwhile.
      expect(hostReadBytes() - before).toBeLessThan(total / 4);
    });

    it("ends the consumer with EOF when the producer ends", async () => {
      const pipe = createPipe();
      const producer = runtime.bash("printf 'a\\nb\\n'", { stdio: ["ignore", pipe, "pipe"] });
      const consumer = runtime.bash("wc -l", { stdio: [pipe, "pipe", "pipe"] });
      expect((await consumer).output).toBe("2");
      expect((await producer).exitCode).toBe(0);
    });

    it("ends the producer with SIGPIPE when the consumer exits early, and a consumer's timeout does the same", async () => {
      const pipe = createPipe();
      const producer = runtime.bash("exec yes", { stdio: ["ignore", pipe, "pipe"], reject: false });
      const consumer = runtime.bash("exec head -n 1", { stdio: [pipe, "pipe", "pipe"] });
      expect((await consumer).output).toBe("y");
      expect((await producer).signal).toBe("SIGPIPE");

      const second = createPipe();
      const writer = runtime.bash("exec yes", { stdio: ["ignore", second, "pipe"], reject: false });
      const stuck = runtime.bash("exec sleep 1000", {
        stdio: [second, "pipe", "pipe"],
        timeout: 50,
        reject: false,
      });
      expect((await stuck).failure).toBe("timeout");
      expect((await writer).signal).toBe("SIGPIPE");
    });

    it.runIf(native && cgroupSupport().available)(
      "keeps each step's containment: both contained, SIGPIPE and EOF as without",
      async () => {
        const pipe = createPipe();
        const producer = runtime.bash("yes | cat", {
          stdio: ["ignore", pipe, "pipe"],
          contain: true,
          reject: false,
        });
        const consumer = runtime.bash("head -n 2", {
          stdio: [pipe, "pipe", "pipe"],
          contain: true,
        });
        const [made, used] = await Promise.all([producer, consumer]);
        expect(used.output).toBe("y\ny");
        expect(used.contained).not.toBeNull();
        expect(made.contained).not.toBeNull();
        // cat died of SIGPIPE, and yes with it; bash reports its last command's death.
        expect(made.exitCode === 141 || made.signal === "SIGPIPE").toBe(true);
      },
    );

    it("pipes stdout and stderr together into one pipe (2>&1 |)", async () => {
      const pipe = createPipe();
      const producer = runtime.bash("echo out; echo err >&2", { stdio: ["ignore", pipe, pipe] });
      const consumer = runtime.bash("sort", { stdio: [pipe, "pipe", "pipe"] });
      expect((await consumer).output).toBe("err\nout");
      await producer;
    });

    it("pipes runtime.spawn and spawn children the same way", async () => {
      const pipe = createPipe();
      const producer = runtime.spawn("/bin/echo", ["from spawn"], {
        stdio: ["ignore", pipe, "pipe"],
      });
      const consumer = spawn("/bin/cat", [], { stdio: [pipe, "pipe", "pipe"] });
      expect((await consumer).stdout).toBe("from spawn\n");
      await producer;
      // A synchronous producer into a consumer already running.
      const second = createPipe();
      const reader = spawn("/bin/cat", [], { stdio: [second, "pipe", "pipe"] });
      spawnSync("/bin/echo", ["from spawnSync"], { stdio: ["ignore", second, "pipe"] });
      expect(second.readHeld || second.writeHeld).toBe(false);
      expect((await reader).stdout).toBe("from spawnSync\n");
    });

    it("gives each end to one call only, and closes it even when that call throws", async () => {
      const pipe = createPipe();
      const producer = runtime.bash("exec yes", { stdio: ["ignore", pipe, "pipe"], reject: false });
      expect(() => runtime.bash("true", { stdio: ["ignore", pipe, "pipe"] })).toThrow(
        /stdio\[1\] is a pipe whose write end was already given to a child, or closed/,
      );
      // A call that throws (an unknown option) still closes the read end it was given …
      expect(() =>
        runtime.bash("cat", { stdio: [pipe, "pipe", "pipe"], bogus: 1 } as never),
      ).toThrow(TypeError);
      expect(pipe.readHeld).toBe(false);
      // … so the producer, with no reader left, ends with SIGPIPE.
      expect((await producer).signal).toBe("SIGPIPE");
    });

    it("refuses a pipe beyond stdio[2] and beside input", () => {
      const pipe = createPipe();
      try {
        expect(() => spawn("/bin/true", [], { stdio: ["ignore", "pipe", "pipe", pipe] })).toThrow(
          /stdio\[3\] may be a pipe only in slots 0-2/,
        );
        expect(() => spawn("/bin/cat", [], { stdio: [pipe, "pipe", "pipe"], input: "x" })).toThrow(
          /input needs stdin to be a pipe/,
        );
      } finally {
        pipe.close();
      }
      expect(pipe.readHeld || pipe.writeHeld).toBe(false);
    });

    it("close() lets a producer whose consumer never starts end with SIGPIPE", async () => {
      const pipe = createPipe();
      const producer = runtime.bash("exec yes", { stdio: ["ignore", pipe, "pipe"], reject: false });
      pipe.close();
      expect((await producer).signal).toBe("SIGPIPE");
    });
  });
}
