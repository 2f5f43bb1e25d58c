/** A pino logger that keeps every line in memory, for asserting on log content. */
import pino, { type Logger } from "pino";

export interface CapturedLog {
  readonly log: Logger;
  readonly lines: string[];
  /** Every line parsed as JSON. */
  records(): Record<string, unknown>[];
}

export function captureLog(): CapturedLog {
  const lines: string[] = [];
  const log = pino(
    { level: "trace" },
    {
      write(chunk: string) {
        lines.push(chunk);
      },
    },
  );
  return {
    log,
    lines,
    records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
