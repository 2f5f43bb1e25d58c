/**
 * OutputCapture's limit (src/spawn/output-capture.ts), driven by a stream of
 * its own: exactly `maxBuffer` bytes are no overflow; one more is, and the
 * capture keeps the first `maxBuffer` bytes — the head of the chunk that
 * crossed the limit included — and closes the stream. Seen red with the
 * limit tested with `>=` (row output-limit-boundary) and with the crossing
 * chunk's head dropped (row output-limit-keeps-head).
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { OutputCapture } from "../../src/spawn/output-capture.js";

function fed(chunks: string[], maxBuffer: number) {
  const stream = new PassThrough();
  let overflows = 0;
  const capture = new OutputCapture(stream, maxBuffer, () => overflows++);
  for (const chunk of chunks) stream.write(chunk);
  stream.end();
  return { capture, stream, overflows: () => overflows };
}

async function closed(stream: PassThrough): Promise<void> {
  if (!stream.destroyed) await new Promise((resolve) => stream.once("close", resolve));
}

describe("the capture's limit", () => {
  it("exactly maxBuffer bytes, in one chunk or several, are kept whole and no overflow", async () => {
    for (const chunks of [["abcdefgh"], ["abc", "defgh"], ["abcdefg", "h"]]) {
      const { capture, stream, overflows } = fed(chunks, 8);
      await closed(stream);
      expect(overflows()).toBe(0);
      expect(capture.overflowed).toBe(false);
      expect(capture.value("utf8")).toBe("abcdefgh");
    }
  });

  it("one byte more overflows once, keeping the first maxBuffer bytes", async () => {
    for (const chunks of [
      ["abcdefghi"],
      ["abc", "defghi"],
      ["abcdefgh", "i"],
      ["ab", "cdefghij", "k"],
    ]) {
      const { capture, stream, overflows } = fed(chunks, 8);
      await closed(stream);
      expect(overflows()).toBe(1);
      expect(capture.overflowed).toBe(true);
      expect(capture.value("utf8")).toBe("abcdefgh");
    }
  });
});
