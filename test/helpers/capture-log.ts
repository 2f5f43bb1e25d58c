/** A pino logger writing JSON lines to memory, for asserting on log events. */
import pino, { type Logger } from "pino";

export interface CapturedLog {
  readonly logger: Logger;
  /** Raw JSON lines as written. */
  readonly lines: string[];
  /** Parsed events. */
  events(): Record<string, unknown>[];
}

export function captureLog(): CapturedLog {
  const lines: string[] = [];
  const logger = pino({ level: "trace" }, { write: (line: string) => void lines.push(line) });
  return {
    logger,
    lines,
    events: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
