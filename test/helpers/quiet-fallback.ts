/**
 * For a test file that runs on the child_process fallback: turns the addon
 * off in this worker process (each file runs in its own: forks pool) and
 * silences the library's logger until the file ends (its warnings go to
 * `onWarn` when given).
 */
import { afterAll } from "vitest";
import { disableNative, type Logger, setLogger } from "../../src/index.js";

export function useQuietFallback(onWarn?: (...args: unknown[]) => void): void {
  disableNative();
  const quiet = () => {};
  setLogger({
    warn: onWarn ?? quiet,
    error: quiet,
    info: quiet,
    debug: quiet,
    trace: quiet,
    fatal: quiet,
  } as unknown as Logger);
  afterAll(() => setLogger(undefined));
}
