/**
 * A child's output stream as lines, while it runs: what `for await (const
 * line of subprocess)` and `subprocess.lines("stderr")` iterate.
 *
 * - It starts with what was read before the iteration began (the capture so
 *   far), then takes the stream's chunks as they come, pulling them (a slow
 *   loop holds the child back instead of piling up lines).
 * - A line ends at "\n"; a "\r" before it is dropped ("\r\n" endings); a last
 *   line without "\n" is yielded too; the text is decoded with `encoding`
 *   across chunk boundaries (StringDecoder).
 * - Leaving the loop early stops the iteration, not the child: the stream
 *   keeps flowing (into the capture, or read and dropped), so the child never
 *   blocks on a full pipe.
 * - A stream cut short (maxBuffer, a destroyed socket) ends the iteration; the
 *   run's outcome, failures included, is what awaiting the subprocess gives.
 */
import type { Buffer } from "node:buffer";
import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";

const ignore = () => {};

function withoutCr(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}

/**
 * Yields `stream`'s lines, starting with `readSoFar()` (bytes consumed before
 * the iteration, by the capture). Total: never throws for the stream's own
 * errors; an error from the consumer's loop body propagates as usual.
 */
export async function* streamLines(
  stream: Readable,
  readSoFar: () => Buffer | undefined,
  encoding: BufferEncoding,
): AsyncGenerator<string, void, undefined> {
  const decoder = new StringDecoder(encoding);
  let partial = "";
  const complete = (text: string): string[] => {
    const parts = (partial + text).split("\n");
    partial = parts.pop()!;
    return parts.map(withoutCr);
  };
  // One synchronous step: the snapshot, then the stream iterator's first read
  // (it attaches its listener and stops the flow), so no chunk falls between.
  const first = readSoFar();
  const chunks = stream.iterator({ destroyOnReturn: false });
  let next: Promise<IteratorResult<Buffer | string>> | undefined = chunks.next();
  try {
    if (first !== undefined) yield* complete(decoder.write(first));
    for (;;) {
      let step: IteratorResult<Buffer | string>;
      try {
        step = await next!;
      } catch {
        // The stream was cut short; what it delivered was yielded.
        step = { done: true, value: undefined };
      }
      next = undefined;
      if (step.done) break;
      const chunk = step.value;
      yield* complete(typeof chunk === "string" ? chunk : decoder.write(chunk));
      next = chunks.next();
    }
  } finally {
    if (next !== undefined) next.catch(ignore);
    chunks.return?.().catch(ignore);
    // Keep the child's pipe draining after an early exit from the loop.
    stream.on("data", ignore);
  }
  const last = partial + decoder.end();
  if (last.length > 0) yield withoutCr(last);
}
