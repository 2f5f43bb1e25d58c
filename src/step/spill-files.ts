/**
 * Writes spilled step values and large scripts to private temporary files.
 * The only file-system code of the spill.
 *
 * Each step gets a fresh directory from mkdtemp(3) under TMPDIR (mode 0700);
 * each file is created with O_CREAT|O_EXCL|O_WRONLY|O_NOFOLLOW and mode 0600,
 * so it is never opened through a symlink or an existing file. Spill files are
 * named by index (v0, v1, … in the plan's `spilled` order), never by variable
 * name, and never go to the step's working directory. Errors name the
 * variable, the value's byte length and the I/O error code, never the value.
 */
import { Buffer } from "node:buffer";
import { constants } from "node:fs";
import { mkdtemp as fsMkdtemp, open, rm } from "node:fs/promises";
import { join } from "node:path";
import { displayName, SpillError } from "../errors.js";
import { logger } from "../log.js";
import type { SpillFileRef } from "./preamble.js";
import {
  SCRIPT_FILE_NAME,
  scriptDirTemplate,
  spillDirTemplate,
  spillFileName,
} from "./temp-layout.js";

const CREATE_FLAGS =
  constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW;
const FILE_MODE = 0o600;

export interface TempFileOptions {
  /** Parent of the private directory. Default os.tmpdir() (TMPDIR). Resolved to an absolute path. */
  readonly tmpdir?: string;
  /** Test seam: creates the directory from a template prefix (default fs.promises.mkdtemp). */
  readonly mkdtemp?: (prefix: string) => Promise<string>;
}

export interface SpillFiles {
  /** The private directory, or undefined when nothing was spilled (none is created). */
  readonly dir: string | undefined;
  /** One file per spilled variable, in the plan's order: feed to renderPreamble. */
  readonly files: readonly SpillFileRef[];
  /** Removes the directory and everything in it. Idempotent; never throws. */
  remove(): Promise<void>;
}

export interface ScriptFile {
  readonly dir: string;
  readonly path: string;
  /** Removes the directory and the script. Idempotent; never throws. */
  remove(): Promise<void>;
}

function ioCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "EIO";
}

function remover(dir: string): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => {
    done ??= rm(dir, { recursive: true, force: true }).catch((error: unknown) => {
      logger().warn({ dir, code: ioCode(error) }, "could not remove a private temporary directory");
    });
    return done;
  };
}

async function writeExclusive(path: string, data: Buffer): Promise<void> {
  const handle = await open(path, CREATE_FLAGS, FILE_MODE);
  try {
    await handle.writeFile(data);
  } finally {
    await handle.close();
  }
}

/**
 * Writes each value to `dir/v<i>` (i = its index in `spills`) with
 * O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600. Exposed for tests that pre-plant a
 * symlink; does not create or remove `dir`. Throws SpillError
 * (ERR_EXACTSPAWN_SPILL_WRITE) naming the variable, its byte length and the
 * I/O code; never the value.
 */
export async function writeSpillFilesInto(
  dir: string,
  spills: readonly { readonly name: string; readonly value: string }[],
): Promise<SpillFileRef[]> {
  const files: SpillFileRef[] = [];
  for (const [index, { name, value }] of spills.entries()) {
    const path = join(dir, spillFileName(index));
    const data = Buffer.from(value, "utf8");
    try {
      await writeExclusive(path, data);
    } catch (error) {
      const code = ioCode(error);
      throw new SpillError("ERR_EXACTSPAWN_SPILL_WRITE", name, data.length, code, {
        cause: error,
        ioCode: code,
      });
    }
    files.push({ name, path });
  }
  return files;
}

/**
 * Writes the plan's spilled values (taken from `env`, the environment the plan
 * was made from) into a fresh private directory under `tmpdir`. Creates
 * nothing when the plan spilled nothing. On any failure the partial directory
 * is removed and a SpillError names the first affected variable, its byte
 * length and the I/O code; never the value. Throws TypeError, before creating
 * anything, when `env` lacks a spilled name (e.g. `plan.inline` was passed).
 */
export async function writeSpillFiles(
  plan: { readonly spilled: readonly { readonly name: string }[] },
  env: ReadonlyMap<string, string>,
  options: TempFileOptions = {},
): Promise<SpillFiles> {
  if (plan.spilled.length === 0) {
    return { dir: undefined, files: [], remove: () => Promise.resolve() };
  }
  const spills = plan.spilled.map(({ name }) => {
    const value = env.get(name);
    if (value === undefined) {
      // Most likely plan.inline was passed: it no longer holds the spilled values.
      throw new TypeError(
        `writeSpillFiles: no value for spilled variable ${displayName(name)}; ` +
          "pass the environment the plan was made from, not plan.inline",
      );
    }
    return { name, value };
  });
  const mkdtemp = options.mkdtemp ?? ((prefix: string) => fsMkdtemp(prefix));
  let dir: string;
  try {
    dir = await mkdtemp(spillDirTemplate(options.tmpdir));
  } catch (error) {
    const first = spills[0]!;
    const code = ioCode(error);
    throw new SpillError(
      "ERR_EXACTSPAWN_SPILL_WRITE",
      first.name,
      Buffer.byteLength(first.value, "utf8"),
      `${code} creating the private spill directory`,
      { cause: error, ioCode: code },
    );
  }
  const remove = remover(dir);
  try {
    const files = await writeSpillFilesInto(dir, spills);
    logger().debug({ dir, count: files.length }, "spill files written");
    return { dir, files, remove };
  } catch (error) {
    await remove();
    throw error;
  }
}

/**
 * Writes a script (preamble + command; spilled values are never in it) to
 * `script.sh` in a fresh private 0700 directory under `tmpdir`, mode 0600,
 * O_EXCL|O_NOFOLLOW. Removes the directory if writing fails; the error is
 * the I/O error (it carries paths, never script text).
 */
export async function writeScriptFile(
  script: string,
  options: TempFileOptions = {},
): Promise<ScriptFile> {
  const mkdtemp = options.mkdtemp ?? ((prefix: string) => fsMkdtemp(prefix));
  const dir = await mkdtemp(scriptDirTemplate(options.tmpdir));
  const remove = remover(dir);
  const path = join(dir, SCRIPT_FILE_NAME);
  try {
    await writeExclusive(path, Buffer.from(script, "utf8"));
  } catch (error) {
    await remove();
    throw error;
  }
  return { dir, path, remove };
}
