/**
 * Opens the descriptors that carry a bash step's spilled values and large
 * script to the child. The only file-system code of the spill.
 *
 * Nothing is ever read back by path. In order of preference:
 *  - "memfd": memfd_create through the addon, close-on-exec, sealed against
 *    writing, growing and shrinking. No path exists at all.
 *  - "tmpfile": open(TMPDIR, O_TMPFILE|O_RDWR, 0600) (the fallback engine,
 *    or an addon without memfd). The inode has no name; nobody else can open
 *    it, and it is gone once the last descriptor closes.
 *  - "unlinked": a random name in TMPDIR opened O_CREAT|O_EXCL|O_NOFOLLOW,
 *    0600, and unlinked before a byte is written, for file systems without
 *    O_TMPFILE. Because a name exists for that moment, TMPDIR must be
 *    private: a directory writable by group or others without the sticky
 *    bit, or owned by another user (not root), is refused with
 *    UnsafeTmpdirError.
 * Every descriptor starts at offset 0 (writes are positional) and is
 * close-on-exec; a spawn passes it by dup2 onto the step's slot. Errors
 * name the variable, the byte length and the I/O code, never a value.
 */

import { Buffer } from "node:buffer";
import { randomBytes } from "node:crypto";
import { closeSync, constants, openSync, statSync, unlinkSync, writeSync } from "node:fs";
import { constants as osConstants, tmpdir as osTmpdir } from "node:os";
import { join, resolve } from "node:path";
import { displayName, SpillError, systemError } from "../errors.js";
import { ownProperties } from "../known-options.js";
import { logger } from "../log.js";
import type { NativeBinding } from "../native.js";
import { type SpillRead, spillReads, spillValuesBytes } from "./preamble.js";
import { UNLINKED_FILE_PREFIX } from "./temp-layout.js";

/** How a descriptor was made, most private first. */
export type DescriptorKind = "memfd" | "tmpfile" | "unlinked";

const ALL_KINDS: readonly DescriptorKind[] = ["memfd", "tmpfile", "unlinked"];

/**
 * Linux's O_TMPFILE is __O_TMPFILE | O_DIRECTORY; Node does not export it.
 * __O_TMPFILE is 020000000 on the architectures listed (asm-generic and
 * x86); elsewhere the value differs and the kind is skipped.
 */
const GENERIC_O_TMPFILE_ARCHES = new Set([
  "x64",
  "ia32",
  "arm",
  "arm64",
  "riscv64",
  "s390x",
  "ppc64",
  "loong64",
]);
const O_TMPFILE = GENERIC_O_TMPFILE_ARCHES.has(process.arch)
  ? 0o20000000 | constants.O_DIRECTORY
  : undefined;

/** Errors by which open(O_TMPFILE) says "not supported here" (then the next kind is tried). */
const TMPFILE_UNSUPPORTED = new Set(["EOPNOTSUPP", "ENOTSUP", "EISDIR", "EINVAL"]);

const NAMED_FLAGS = constants.O_CREAT | constants.O_EXCL | constants.O_RDWR | constants.O_NOFOLLOW;
const FILE_MODE = 0o600;
/** The sticky bit: in such a directory only an entry's owner may rename or remove it. */
const S_ISVTX = 0o1000;

/** TMPDIR is not private enough for a file that has a name, even briefly. Carries the path, never a value. */
export class UnsafeTmpdirError extends Error {
  override readonly name = "UnsafeTmpdirError";
  readonly code = "ERR_EXACTSPAWN_UNSAFE_TMPDIR";
  readonly path: string;
  /** "not a directory", "writable by others without the sticky bit", "owned by uid N". */
  readonly reason: string;
  constructor(path: string, reason: string) {
    super(`refusing to spill through ${path}: ${reason}`);
    this.path = path;
    this.reason = reason;
  }
}

export interface DescriptorOptions {
  /** The directory for the fallback kinds. Default os.tmpdir() (TMPDIR). */
  readonly tmpdir?: string | undefined;
  /** The addon, for memfd; null or lacking `sealedMemfd`: the file kinds only. */
  readonly binding?: Pick<NativeBinding, "sealedMemfd" | "closeFd"> | null | undefined;
  /** Test seam: the kinds to try, in order. Default all three. */
  readonly kinds?: readonly DescriptorKind[] | undefined;
  /** Test seam: the last-resort file's name in `tmpdir`. Default `.exactspawn-<24 random hex>`. */
  readonly name?: (() => string) | undefined;
}

/** A descriptor holding bytes for the child. */
export interface SpillDescriptor {
  readonly fd: number;
  readonly kind: DescriptorKind;
  /** Closes the parent's copy. Idempotent; never throws. */
  close(): void;
}

/**
 * Throws UnsafeTmpdirError unless `dir` is a directory owned by this user
 * or root and not writable by group or others unless it has the sticky bit
 * (as /tmp does). Follows a symlinked TMPDIR, like every program does.
 */
export function assertPrivateDirectory(dir: string): void {
  const stats = statSync(dir);
  if (!stats.isDirectory()) throw new UnsafeTmpdirError(dir, "not a directory");
  const uid = process.getuid?.();
  if (stats.uid !== 0 && uid !== undefined && stats.uid !== uid) {
    throw new UnsafeTmpdirError(dir, `owned by uid ${stats.uid}`);
  }
  if ((stats.mode & 0o022) !== 0 && (stats.mode & S_ISVTX) === 0) {
    throw new UnsafeTmpdirError(dir, "writable by group or others without the sticky bit");
  }
}

function writeAll(fd: number, bytes: Buffer): void {
  let done = 0;
  while (done < bytes.length) {
    const n = writeSync(fd, bytes, done, bytes.length - done, done);
    if (n <= 0) throw systemError(osConstants.errno.EIO, "write");
    done += n;
  }
}

function closer(fd: number, close: (fd: number) => void): () => void {
  let closed = false;
  return () => {
    if (closed) return;
    closed = true;
    try {
      close(fd);
    } catch {
      // The fd number is released even when close reports an error.
    }
  };
}

function fsClose(fd: number): void {
  closeSync(fd);
}

function tmpfile(dir: string, bytes: Buffer): number | undefined {
  if (O_TMPFILE === undefined) return undefined;
  let fd: number;
  try {
    fd = openSync(dir, O_TMPFILE | constants.O_RDWR, FILE_MODE);
  } catch (error) {
    if (TMPFILE_UNSUPPORTED.has((error as { code?: string }).code ?? "")) return undefined;
    throw error;
  }
  try {
    writeAll(fd, bytes);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}

function unlinked(dir: string, bytes: Buffer, name: string): number {
  assertPrivateDirectory(dir);
  const path = join(dir, name);
  const fd = openSync(path, NAMED_FLAGS, FILE_MODE);
  try {
    unlinkSync(path);
    writeAll(fd, bytes);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}

/**
 * Opens a descriptor holding exactly `bytes`, the most private way
 * available (see the module comment). `purpose` names the memfd (visible
 * only as /proc/<pid>/fd/N -> /memfd:<purpose>). Throws the I/O error
 * (code, syscall; a path only for the directory) or UnsafeTmpdirError.
 */
export function openSpillDescriptor(
  purpose: string,
  bytes: Buffer,
  given: DescriptorOptions = {},
): SpillDescriptor {
  // Own properties only (known-options.ts): no inherited kinds or file name.
  const options = ownProperties(given);
  const binding = options.binding;
  const dir = resolve(options.tmpdir ?? osTmpdir());
  for (const kind of options.kinds ?? ALL_KINDS) {
    if (kind === "memfd") {
      const make = binding?.sealedMemfd;
      if (make === undefined) continue;
      const fd = make(`exactspawn-${purpose}`, bytes);
      const close = binding?.closeFd;
      return { fd, kind, close: closer(fd, close === undefined ? fsClose : (n) => close(n)) };
    }
    const fd =
      kind === "tmpfile"
        ? tmpfile(dir, bytes)
        : unlinked(
            dir,
            bytes,
            options.name?.() ?? `${UNLINKED_FILE_PREFIX}${randomBytes(12).toString("hex")}`,
          );
    if (fd !== undefined) return { fd, kind, close: closer(fd, fsClose) };
  }
  throw new TypeError(
    `openSpillDescriptor: none of the kinds ${(options.kinds ?? ALL_KINDS).join(", ")} is available`,
  );
}

function ioCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "EIO";
}

/** The spilled values of a step, in one descriptor. */
export interface SpillValues {
  /** undefined when nothing was spilled (no descriptor is opened). */
  readonly descriptor: SpillDescriptor | undefined;
  /** Each spilled variable and its value's byte count, in the order written: feed to renderPreamble. */
  readonly reads: readonly SpillRead[];
}

/**
 * Writes the plan's spilled values (taken from `env`, the environment the
 * plan was made from; Buffers are written as they are) one after another
 * into one descriptor, each distinct string value once (see spillReads). Opens nothing when the plan spilled nothing. Throws
 * SpillError (ERR_EXACTSPAWN_SPILL_WRITE, or the UnsafeTmpdirError's code
 * as its ioCode) naming the first spilled variable, the total byte length
 * and the I/O code, never a value; TypeError, before opening anything, when
 * `env` lacks a spilled name (e.g. `plan.inline` was passed).
 */
export function writeSpillValues(
  plan: { readonly spilled: readonly { readonly name: string }[] },
  env: ReadonlyMap<string, string | Buffer>,
  options: DescriptorOptions = {},
): SpillValues {
  if (plan.spilled.length === 0) return { descriptor: undefined, reads: [] };
  const names = plan.spilled.map(({ name }) => name);
  const reads = spillReads(names, (name) => {
    const value = env.get(name);
    if (value === undefined) {
      throw new TypeError(
        `writeSpillValues: no value for spilled variable ${displayName(name)}; ` +
          "pass the environment the plan was made from, not plan.inline",
      );
    }
    return value;
  });
  // A copy (sameAs) is not written: the preamble copies the earlier variable.
  const written = reads.filter((read) => read.sameAs === undefined);
  const all = spillValuesBytes(written.map(({ name }) => env.get(name)!));
  // Reported sizes are the values' own bytes (each once), not the framing.
  const bytes = written.reduce((sum, read) => sum + read.bytes, 0);
  try {
    const descriptor = openSpillDescriptor("values", all, options);
    logger().debug({ kind: descriptor.kind, count: reads.length, bytes }, "spill values written");
    return { descriptor, reads };
  } catch (error) {
    const code = ioCode(error);
    const first = reads[0]!;
    // the values' bytes, each once
    const detail =
      error instanceof UnsafeTmpdirError
        ? `${error.message}`
        : `${code} opening the spill descriptor`;
    throw new SpillError("ERR_EXACTSPAWN_SPILL_WRITE", first.name, bytes, detail, {
      cause: error,
      ioCode: code,
    });
  }
}

/**
 * Opens a descriptor holding a script (preamble + command; spilled values
 * are never in it). Throws the I/O error or UnsafeTmpdirError (they carry
 * codes and the directory, never script text).
 */
export function writeScriptDescriptor(
  script: string,
  options: DescriptorOptions = {},
): SpillDescriptor {
  return openSpillDescriptor("script", Buffer.from(script, "utf8"), options);
}
