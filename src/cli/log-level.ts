/**
 * `--log-level L`: the command's pino level. Default `error`, or
 * EXACTSPAWN_LOG_LEVEL; the option wins. Events go to stderr as JSON lines
 * and carry names and sizes only.
 */
import pino from "pino";
import { type Logger, logger, setLogger, stderrLogger } from "../log.js";
import { UsageError } from "./usage-error.js";

/** Installs a logger at `level` (when given) and returns the logger in use. */
export function applyLogLevel(level: string | undefined): Logger {
  if (level === undefined) return logger();
  if (pino.levels.values[level] === undefined && level !== "silent") {
    const known = [...Object.keys(pino.levels.values), "silent"].join(", ");
    throw new UsageError(`--log-level must be one of ${known}`);
  }
  setLogger(stderrLogger(level));
  return logger();
}
