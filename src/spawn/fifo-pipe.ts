/**
 * A kernel pipe made without the addon, for createPipe() on the
 * child_process fallback (Node has no pipe(2)): a FIFO made by mkfifo(1)
 * (found on the parent's PATH) in a fresh private directory (mkdtemp: mode
 * 0700, so no other user can reach the name), opened read-write first so
 * that the two blocking opens after it find a peer and return at once
 * (fifo(7): on Linux an O_RDWR open of a FIFO needs none), then read-only
 * and write-only; the read-write descriptor is closed and the name removed
 * before it returns. What is left is an ordinary pipe's two ends, blocking,
 * close-on-exec (libuv opens every file so).
 */
import { spawnSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FallbackUnsupportedError } from "./fallback-engine.js";
import { resolveFile } from "./resolve-file.js";

function unsupported(why: string, cause?: unknown): FallbackUnsupportedError {
  const error = new FallbackUnsupportedError(
    `createPipe without the native addon needs mkfifo(1): ${why}`,
  );
  if (cause !== undefined) error.cause = cause;
  return error;
}

/** [readFd, writeFd] of a new pipe; throws FallbackUnsupportedError or the open's system error. */
export function fifoPipe(): [number, number] {
  const dir = mkdtempSync(join(tmpdir(), "exactspawn-pipe-"));
  const path = join(dir, "fifo");
  let both = -1;
  try {
    let mkfifo: string;
    try {
      mkfifo = resolveFile("mkfifo", process.env["PATH"], dir);
    } catch (error) {
      throw unsupported("it is not on PATH", error);
    }
    const made = spawnSync(mkfifo, ["-m", "600", path], { stdio: "ignore", env: {} });
    if (made.error !== undefined || made.status !== 0) {
      throw unsupported(`it failed (${made.error?.message ?? `exit status ${made.status}`})`);
    }
    both = openSync(path, constants.O_RDWR);
    const read = openSync(path, constants.O_RDONLY);
    try {
      return [read, openSync(path, constants.O_WRONLY)];
    } catch (error) {
      closeSync(read);
      throw error;
    }
  } finally {
    if (both >= 0) closeSync(both);
    rmSync(dir, { recursive: true, force: true });
  }
}
