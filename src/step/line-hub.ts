/**
 * One reader per output stream of a step, many readers of its lines: the
 * hub pulls stdout's and stderr's lines once (Subprocess.lines: from the
 * first byte) and keeps them in arrival order, so any number of
 * `handle.lines("stdout" | "stderr" | "all")` loops, started at any time,
 * each see every line, and `all` (the two streams interleaved line by line,
 * in the order their lines arrived) can be built at the end.
 *
 * It reads eagerly: a slow loop never holds the child back (the lines are
 * kept for the handle's lifetime instead). Lines of one stream keep their
 * order; across the two streams the order is the order the parent read them.
 */

export type LineStream = "stdout" | "stderr";

interface Entry {
  readonly stream: LineStream;
  readonly line: string;
}

export class LineHub {
  readonly #entries: Entry[] = [];
  readonly #open = new Set<LineStream>();
  readonly #sources: ReadonlySet<LineStream>;
  #wake: (() => void)[] = [];
  /** Settles once every source has ended. */
  readonly done: Promise<void>;

  /** `sources`: the streams that are pipes, each as a line iterator from its first byte. */
  constructor(sources: Partial<Record<LineStream, AsyncIterable<string>>>) {
    const pumps: Promise<void>[] = [];
    for (const [stream, lines] of Object.entries(sources) as [
      LineStream,
      AsyncIterable<string>,
    ][]) {
      this.#open.add(stream);
      pumps.push(this.#pump(stream, lines));
    }
    this.#sources = new Set(this.#open);
    this.done = Promise.all(pumps).then(() => {});
  }

  /** Whether `stream` is a pipe the hub reads. */
  has(stream: LineStream): boolean {
    return this.#sources.has(stream);
  }

  async #pump(stream: LineStream, lines: AsyncIterable<string>): Promise<void> {
    try {
      for await (const line of lines) {
        this.#entries.push({ stream, line });
        this.#notify();
      }
    } catch {
      // A child that never started: the step's result carries that error.
    } finally {
      this.#open.delete(stream);
      this.#notify();
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = [];
    for (const resolve of wake) resolve();
  }

  /** Every line of `which` ("all": both, interleaved), from the first, until the streams end. */
  async *lines(which: LineStream | "all"): AsyncGenerator<string, void, undefined> {
    let index = 0;
    for (;;) {
      while (index < this.#entries.length) {
        const entry = this.#entries[index++]!;
        if (which === "all" || entry.stream === which) yield entry.line;
      }
      const open = which === "all" ? this.#open.size > 0 : this.#open.has(which);
      if (!open) return;
      await new Promise<void>((resolve) => this.#wake.push(resolve));
    }
  }

  /** Both streams' lines interleaved, each ending in "\n" (call after `done`). */
  all(): string {
    let text = "";
    for (const entry of this.#entries) text += `${entry.line}\n`;
    return text;
  }
}
