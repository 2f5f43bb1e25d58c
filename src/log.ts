/**
 * The library's logger: pino, writing JSON lines to stderr.
 *
 * Default level `error` (skip and trim notices are advisory), raised with
 * EXACTSPAWN_LOG_LEVEL or replaced by a host's own pino logger. Every event
 * carries names, sizes and reasons only — callers never pass values here.
 * Field names never collide with pino's own (`name`, `msg`, `level`, `time`,
 * `pid`, `hostname`): a variable is `variable`, a child's pid `childPid`.
 */
import pino, { type Logger } from "pino";
import { escapeJsonControls } from "./errors.js";

export type { Logger };

let current: Logger | undefined;

/**
 * A logger writing JSON lines to stderr at `level` (unknown levels mean
 * "error"); the library writes through its `lib: "exactspawn"` child.
 */
export function stderrLogger(level: string): Logger {
  const known = pino.levels.values[level] !== undefined || level === "silent";
  const stderr = pino.destination({ fd: 2, sync: true });
  // Names in events may come from input: no raw C1 or bidi character reaches a terminal.
  const escaped = { write: (line: string) => stderr.write(escapeJsonControls(line)) };
  return pino({ base: null, level: known ? level : "error" }, escaped);
}

function defaultLogger(): Logger {
  return libraryChild(stderrLogger(process.env["EXACTSPAWN_LOG_LEVEL"] ?? "error"));
}

/** The logger in use (created lazily). */
export function logger(): Logger {
  current ??= defaultLogger();
  return current;
}

let silent: Logger | undefined;

/** A logger that writes nothing: for planners whose notices a step reports itself, summarised. */
export function silentLogger(): Logger {
  silent ??= pino({ level: "silent" });
  return silent;
}

let hostSet = false;

/**
 * A host's pino logger as the library writes to it: a child bound to
 * `lib: "exactspawn"`, so the host can route or filter the library's events.
 * A minimal logger without `child` is used as it is.
 */
export function libraryChild(host: Logger): Logger {
  return typeof host.child === "function" ? host.child({ lib: "exactspawn" }) : host;
}

/**
 * Replaces the process-wide logger (a host's own pino instance; the library
 * writes through its child with `lib: "exactspawn"`), or restores the default.
 */
export function setLogger(next: Logger | undefined): void {
  current = next === undefined ? undefined : libraryChild(next);
  hostSet = next !== undefined;
}

/** Whether a host has set its own logger. */
export function hostLoggerSet(): boolean {
  return hostSet;
}
