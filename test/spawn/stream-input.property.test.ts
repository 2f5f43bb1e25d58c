/**
 * Properties of the two stream pieces that hold bytes (fast-check): whatever
 * the chunks (text with multi-byte characters, bytes, empty ones) and however
 * small the child's stdin buffer, feedInput writes exactly their bytes, in
 * order, ends stdin, and takes a chunk only when stdin has room for it (red
 * with the wait for 'drain' removed); and a capture's view, made at any point, carries exactly the
 * captured bytes (those over maxBuffer never).
 */
import { Buffer } from "node:buffer";
import { PassThrough, type Readable } from "node:stream";
import { finished } from "node:stream/promises";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { OutputCapture } from "../../src/spawn/output-capture.js";
import { feedInput, StreamInput } from "../../src/spawn/stream-input.js";
import { fakeStdin } from "../helpers/fake-stdin.js";

const chunk = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.uint8Array({ maxLength: 40 }),
);

function bytesOf(chunks: readonly (string | Uint8Array)[]): Buffer {
  return Buffer.concat(
    chunks.map((c) => (typeof c === "string" ? Buffer.from(c) : Buffer.from(c))),
  );
}

async function readAll(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

describe("feedInput (property)", () => {
  it("writes every byte in order, ends stdin, and pulls only as stdin takes them", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(chunk, { maxLength: 30 }),
        fc.integer({ min: 1, max: 64 }),
        async (chunks, room) => {
          const { stdin, got } = fakeStdin(room);
          let pulled = 0;
          let mostAhead = 0;
          function* source() {
            for (const c of chunks) {
              // Empty chunks are skipped, never written: they are not counted.
              if (c.length > 0) pulled++;
              // Chunks taken but not yet handed to the writer's sink.
              mostAhead = Math.max(mostAhead, pulled - got.length);
              yield c;
            }
          }
          await feedInput(new StreamInput(source()), stdin);
          expect(stdin.writableEnded).toBe(true);
          await finished(stdin);
          expect(Buffer.concat(got).equals(bytesOf(chunks))).toBe(true);
          // Up to the buffer's worth is queued in stdin; each chunk fits it or waits.
          expect(mostAhead).toBeLessThanOrEqual(Math.max(2, room + 1));
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("a capture's view (property)", () => {
  it("carries exactly the captured bytes, wherever it is made", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ minLength: 1, maxLength: 40 }), { maxLength: 20 }),
        fc.nat(20),
        fc.integer({ min: 1, max: 400 }),
        async (chunks, viewAt, maxBuffer) => {
          const source = new PassThrough();
          const capture = new OutputCapture(source, maxBuffer, () => {});
          let view: Readable | undefined;
          for (let i = 0; i < chunks.length; i++) {
            if (i === viewAt) view = capture.view();
            source.write(chunks[i]);
            await new Promise((resolve) => setImmediate(resolve));
          }
          view ??= capture.view();
          source.end();
          const kept = bytesOf(chunks).subarray(0, maxBuffer);
          expect((await readAll(view)).equals(kept)).toBe(true);
          expect((capture.value("buffer") as Buffer).equals(kept)).toBe(true);
        },
      ),
      { numRuns: 100 },
    );
  });
});
