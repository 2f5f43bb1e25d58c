/**
 * The library's logger: pino, writing JSON lines to stderr.
 *
 * Default level `error` (skip and trim notices are advisory), raised with
 * EXACTSPAWN_LOG_LEVEL or replaced by a host's own pino logger. Every event
 * carries names, sizes and reasons only — callers never pass values here.
 */
import pino, { type Logger } from "pino";

export type { Logger };

let current: Logger | undefined;

function defaultLogger(): Logger {
  const level = process.env["EXACTSPAWN_LOG_LEVEL"] ?? "error";
  return pino(
    // No pino `name`: events carry a variable's `name`, and one JSON key must not mean two things.
    {
      base: { lib: "exactspawn" },
      level: pino.levels.values[level] === undefined ? "error" : level,
    },
    pino.destination({ fd: 2, sync: true }),
  );
}

/** The logger in use (created lazily). */
export function logger(): Logger {
  current ??= defaultLogger();
  return current;
}

/** Replaces the process-wide logger (a host's own pino instance), or restores the default. */
export function setLogger(next: Logger | undefined): void {
  current = next;
}
