/**
 * `input` as a stream: a Node Readable, a web ReadableStream, or any
 * (async) iterable of strings, Buffers or Uint8Arrays, written to the
 * child's stdin as it comes.
 *
 * - Backpressure: the next chunk is taken from the source only once stdin
 *   has room (`write` returned true, or 'drain'), so a slow child holds the
 *   source back instead of the host buffering it.
 * - The end of the source closes the child's stdin (EOF).
 * - A child that closes its stdin early (it exited, or stopped reading:
 *   EPIPE) ends the feeding quietly: the source is returned (a Node Readable
 *   destroyed, a web stream cancelled) and the run's outcome is the child's.
 * - A source that throws, or yields anything but a string or bytes, makes
 *   `feedInput` reject with that error: the run then ends with failure
 *   "input" (subprocess.ts), the error as `cause`.
 */
import type { Writable } from "node:stream";

/** The chunks `input` may yield. */
export type InputChunk = string | Uint8Array;

/** `input` as a stream (see the module comment). */
export type InputStream =
  | AsyncIterable<InputChunk>
  | Iterable<InputChunk>
  | ReadableStream<InputChunk>
  | NodeJS.ReadableStream;

/** A validated stream input: the source, kept as given. */
export class StreamInput {
  constructor(readonly source: AsyncIterable<unknown> | Iterable<unknown>) {}
}

/**
 * `value` as a StreamInput when it is a stream or an iterable other than a
 * string or bytes, else undefined. Pure.
 */
export function streamInput(value: unknown): StreamInput | undefined {
  // Bytes are whole input, and other typed arrays are not input at all (they iterate numbers).
  if (value === null || typeof value !== "object" || ArrayBuffer.isView(value)) return undefined;
  const candidate = value as Partial<AsyncIterable<unknown> & Iterable<unknown>>;
  if (
    typeof candidate[Symbol.asyncIterator] === "function" ||
    typeof candidate[Symbol.iterator] === "function"
  ) {
    return new StreamInput(value as AsyncIterable<unknown> | Iterable<unknown>);
  }
  return undefined;
}

/** What `input` yielded that is neither text nor bytes (the chunk itself is never shown). */
export class InputChunkError extends TypeError {
  override readonly name = "InputChunkError";
  readonly code = "ERR_EXACTSPAWN_INPUT_CHUNK";
}

/** Resolves once stdin has room again, or has closed (true: closed). */
function room(stdin: Writable): Promise<boolean> {
  return new Promise((resolve) => {
    const drained = () => done(false);
    const closed = () => done(true);
    function done(isClosed: boolean) {
      stdin.off("drain", drained);
      stdin.off("close", closed);
      resolve(isClosed);
    }
    stdin.on("drain", drained);
    stdin.on("close", closed);
  });
}

function gone(stdin: Writable): boolean {
  return stdin.destroyed || stdin.writableEnded;
}

/**
 * Writes `input`'s chunks to `stdin` with backpressure, then ends it.
 * Resolves when the source is done or stdin closed early; rejects with the
 * source's error (or an InputChunkError) without ending stdin: the caller
 * ends the run.
 */
export async function feedInput(input: StreamInput, stdin: Writable): Promise<void> {
  for await (const chunk of input.source as AsyncIterable<unknown>) {
    if (gone(stdin)) return;
    if (typeof chunk !== "string" && !(chunk instanceof Uint8Array)) {
      throw new InputChunkError(
        `spawn: options.input yielded a chunk of type ${chunk === null ? "null" : typeof chunk}, not a string, Buffer or Uint8Array`,
      );
    }
    if (chunk.length === 0) continue;
    if (!stdin.write(chunk) && (await room(stdin))) return;
  }
  if (!gone(stdin)) stdin.end();
}
