/**
 * The library's logger: pino, writing JSON lines to stderr.
 *
 * Default level `error` (skip and trim notices are advisory), raised with
 * EXACTSPAWN_LOG_LEVEL or replaced by a host's own pino logger. Every event
 * carries names, sizes and reasons only — callers never pass values here.
 */
import pino, { type Logger } from "pino";
import { escapeJsonControls } from "./errors.js";

export type { Logger };

let current: Logger | undefined;

/**
 * A logger writing JSON lines to stderr at `level` (unknown levels mean
 * "error"). No pino `name`: events carry a variable's `name`, and one JSON
 * key must not mean two things.
 */
export function stderrLogger(level: string): Logger {
  const known = pino.levels.values[level] !== undefined || level === "silent";
  const stderr = pino.destination({ fd: 2, sync: true });
  // Names in events may come from input: no raw C1 or bidi character reaches a terminal.
  const escaped = { write: (line: string) => stderr.write(escapeJsonControls(line)) };
  return pino({ base: { lib: "exactspawn" }, level: known ? level : "error" }, escaped);
}

function defaultLogger(): Logger {
  return stderrLogger(process.env["EXACTSPAWN_LOG_LEVEL"] ?? "error");
}

/** The logger in use (created lazily). */
export function logger(): Logger {
  current ??= defaultLogger();
  return current;
}

let hostSet = false;

/** Replaces the process-wide logger (a host's own pino instance), or restores the default. */
export function setLogger(next: Logger | undefined): void {
  current = next;
  hostSet = next !== undefined;
}

/** Whether a host has set its own logger. */
export function hostLoggerSet(): boolean {
  return hostSet;
}
