/**
 * Collects one readable stream's output for the result, up to a byte limit.
 * Chunks are kept as received and joined once at the end. It may start with
 * bytes read before the stream existed (the native engine's own capture),
 * which count against the same limit.
 *
 * `view()` gives a readable stream of the same bytes: everything captured so
 * far, then each chunk as it arrives, ended when the capture ends. It holds
 * the capture's own Buffers (no copy), so a view costs no memory the capture
 * does not already hold, and any number of views each see every byte.
 */
import { Buffer } from "node:buffer";
import { Readable } from "node:stream";

export class OutputCapture {
  readonly #chunks: Buffer[] = [];
  readonly #views = new Set<Readable>();
  #bytes = 0;
  #overflowed = false;
  #ended = false;

  /** Calls onOverflow once when more than maxBuffer bytes arrived (the excess is dropped). */
  constructor(
    stream: Readable | null,
    maxBuffer: number,
    onOverflow: () => void,
    initial?: Buffer,
  ) {
    if (initial !== undefined && initial.length > 0) {
      this.#chunks.push(initial);
      this.#bytes = initial.length;
    }
    if (stream === null) {
      this.#ended = true;
      return;
    }
    stream.on("data", (chunk: Buffer) => {
      if (this.#overflowed) return;
      const room = maxBuffer - this.#bytes;
      if (chunk.length > room) {
        if (room > 0) this.#keep(chunk.subarray(0, room));
        this.#bytes = maxBuffer;
        this.#overflowed = true;
        // Stop reading: the stream closes now, and a writer that keeps going gets EPIPE.
        stream.destroy();
        onOverflow();
        return;
      }
      this.#keep(chunk);
      this.#bytes += chunk.length;
    });
    stream.once("close", () => this.#end());
  }

  get overflowed(): boolean {
    return this.#overflowed;
  }

  value(encoding: BufferEncoding | "buffer"): string | Buffer {
    const bytes =
      this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#bytes);
    return encoding === "buffer" ? bytes : bytes.toString(encoding);
  }

  /** A readable stream of every byte captured, from the first (see the module comment). */
  view(): Readable {
    const view = new Readable({ read() {} });
    for (const chunk of this.#chunks) view.push(chunk);
    if (this.#ended) view.push(null);
    else {
      this.#views.add(view);
      view.once("close", () => this.#views.delete(view));
    }
    return view;
  }

  #keep(chunk: Buffer): void {
    this.#chunks.push(chunk);
    for (const view of this.#views) view.push(chunk);
  }

  #end(): void {
    this.#ended = true;
    for (const view of this.#views) view.push(null);
    this.#views.clear();
  }
}
