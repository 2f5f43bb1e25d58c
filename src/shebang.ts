/**
 * What the kernel's `#!` loader (Linux fs/binfmt_script.c) adds to an exec's
 * argument area, so the exact model holds for scripts as well as binaries.
 *
 * The loader reads the first BINPRM_BUF_SIZE bytes of the file, takes the
 * interpreter and at most one argument from the first line, then rewrites
 * argv: it removes argv[0] (freeing its bytes), and copies the filename as
 * given to execve, the argument (if any) and the interpreter. The pointer
 * count the kernel checked at the start is not recounted, and the filename's
 * own copy was already counted. An interpreter that is itself a script
 * repeats this: its argv[0] (the previous interpreter) is removed and copied
 * back as the script path, so each further level adds its own argument and
 * interpreter. The kernel allows five such levels before ELOOP.
 */
import { Buffer } from "node:buffer";
import { closeSync, constants as fsConstants, fstatSync, openSync, readSync } from "node:fs";

/** Bytes of a file the kernel looks at to choose its loader (include/uapi/linux/binfmts.h). */
export const BINPRM_BUF_SIZE = 256;
/** Script levels exec_binprm() follows; one more is ELOOP (measured: five scripts run, six fail). */
export const MAX_SCRIPT_DEPTH = 5;
/**
 * The most one `#!` line can add: after "#!" the loader keeps at most 253
 * bytes (the buffer's last byte is always cut), one of them a separator when
 * there is an argument, and each copied string gains a NUL: 254 bytes.
 */
export const MAX_SHEBANG_BYTES = BINPRM_BUF_SIZE - 2;

/** One parsed `#!` line: the interpreter path and its optional single argument, as bytes. */
export interface ShebangLine {
  readonly interpreter: Buffer;
  readonly arg: Buffer | null;
}

const HASH = 0x23;
const BANG = 0x21;
const NEWLINE = 0x0a;

function spaceTab(byte: number): boolean {
  return byte === 0x20 || byte === 0x09;
}

/** First index in [from, to] that is not a space or tab, or -1. */
function nonSpaceTab(buf: Uint8Array, from: number, to: number): number {
  for (let i = from; i <= to; i++) if (!spaceTab(buf[i]!)) return i;
  return -1;
}

/** First index in [from, to] that is a space, a tab or NUL, or -1. */
function terminator(buf: Uint8Array, from: number, to: number): number {
  for (let i = from; i <= to; i++) if (spaceTab(buf[i]!) || buf[i] === 0) return i;
  return -1;
}

/** The C string starting at `from` (up to its NUL). */
function cString(buf: Uint8Array, from: number): Buffer {
  const end = buf.indexOf(0, from);
  return Buffer.from(buf.subarray(from, end < 0 ? buf.length : end));
}

/**
 * Pure: splits the head of a file the way load_script() does, or returns
 * null when the kernel would not treat it as a script (no "#!", no
 * interpreter, or an interpreter path cut by the buffer's end). `head` is the
 * file's first bytes; anything past BINPRM_BUF_SIZE is ignored, a shorter
 * head is padded with NULs as the kernel's buffer is.
 */
export function parseShebang(head: Uint8Array): ShebangLine | null {
  const buf = new Uint8Array(BINPRM_BUF_SIZE);
  buf.set(head.subarray(0, BINPRM_BUF_SIZE));
  if (buf[0] !== HASH || buf[1] !== BANG) return null;
  const last = BINPRM_BUF_SIZE - 1;
  // strnchr: the first newline, but the search stops at a NUL.
  let end = -1;
  for (let i = 0; i < BINPRM_BUF_SIZE && buf[i] !== 0; i++) {
    if (buf[i] === NEWLINE) {
      end = i;
      break;
    }
  }
  if (end < 0) {
    // No newline: accepted only when the interpreter path ends inside the buffer.
    const first = nonSpaceTab(buf, 2, last);
    if (first < 0 || terminator(buf, first, last) < 0) return null;
    end = last;
  }
  while (spaceTab(buf[end - 1]!)) end--;
  const name = nonSpaceTab(buf, 2, end);
  if (name < 0 || name === end) return null;
  const sep = terminator(buf, name, end);
  const arg = sep >= 0 && buf[sep] !== 0 ? nonSpaceTab(buf, sep, end) : -1;
  buf[end] = 0;
  if (arg >= 0) buf[sep] = 0;
  return { interpreter: cString(buf, name), arg: arg >= 0 ? cString(buf, arg) : null };
}

/** Reads up to BINPRM_BUF_SIZE bytes of a file; null when it cannot be read. */
export type HeadReader = (path: Buffer) => Uint8Array | null;

/**
 * The default HeadReader: one open, one fstat, one read, one close; any
 * failure is null. Only a regular file is read (the kernel execs nothing
 * else), and the open does not wait: a FIFO never blocks the caller.
 */
export function readHead(path: Buffer): Uint8Array | null {
  let fd: number;
  try {
    fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    if (!fstatSync(fd).isFile()) return null;
    const buf = Buffer.alloc(BINPRM_BUF_SIZE);
    const read = readSync(fd, buf, 0, BINPRM_BUF_SIZE, 0);
    return buf.subarray(0, read);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

const SLASH = Buffer.from("/");

/** An interpreter path as the child's exec resolves it: relative to the child's cwd. */
function atCwd(path: Buffer, cwd: string): Buffer {
  return path[0] === SLASH[0] ? path : Buffer.concat([Buffer.from(cwd), SLASH, path]);
}

/**
 * The `#!` lines the kernel would follow when executing `file` (absolute, or
 * relative to `cwd`), outermost first, at most MAX_SCRIPT_DEPTH of them.
 * Empty for a binary or a file that cannot be read (a script nobody can
 * read cannot run: its interpreter could not open it either).
 */
export function shebangChain(
  file: string,
  cwd: string,
  read: HeadReader = readHead,
): ShebangLine[] {
  const chain: ShebangLine[] = [];
  let path = atCwd(Buffer.from(file), cwd);
  while (chain.length < MAX_SCRIPT_DEPTH) {
    const head = read(path);
    const line = head === null ? null : parseShebang(head);
    if (line === null) break;
    chain.push(line);
    path = atCwd(line.interpreter, cwd);
  }
  return chain;
}

/**
 * Pure: the net bytes the chain's rewrites add to the argument area. Level
 * one frees argv[0] (`argv0Bytes`, the kernel's own "" when argv is empty)
 * and copies the filename (`filenameBytes`); every level copies its argument
 * and interpreter, NULs included. May be negative (a long argv[0]).
 */
export function shebangBytes(
  chain: readonly ShebangLine[],
  filenameBytes: number,
  argv0Bytes: number,
): number {
  if (chain.length === 0) return 0;
  let bytes = filenameBytes - argv0Bytes;
  for (const line of chain) {
    bytes += line.interpreter.length + 1 + (line.arg === null ? 0 : line.arg.length + 1);
  }
  return bytes;
}

/** The most any chain could add for this filename and argv[0] (decides whether to read). */
export function maxShebangBytes(filenameBytes: number, argv0Bytes: number): number {
  return filenameBytes - argv0Bytes + MAX_SCRIPT_DEPTH * MAX_SHEBANG_BYTES;
}

/** What a `#!` rewrite adds to one exec, and whether the file was read to know. */
export interface ShebangCost {
  readonly chain: readonly ShebangLine[];
  /** Bytes the rewrite adds at its peak over the plain image (never negative). */
  readonly bytes: number;
  readonly checked: boolean;
}

/** The cost when the file was not read: nothing added, no chain. */
export const SHEBANG_NOT_READ: ShebangCost = Object.freeze({
  chain: Object.freeze([]),
  bytes: 0,
  checked: false,
});

/**
 * Pure: whether a `#!` line could change the verdict for an exec whose plain
 * (binary) footprint is `plain`: it fits `limit`, but the longest possible
 * rewrite would not. Only then is the file worth reading.
 */
export function shebangMayMatter(
  plain: number,
  filenameBytes: number,
  argv0Bytes: number,
  limit: number,
): boolean {
  return plain <= limit && plain + maxShebangBytes(filenameBytes, argv0Bytes) > limit;
}

/**
 * The `#!` cost of an exec whose plain footprint is `plain`: reads the file
 * only when shebangMayMatter; otherwise returns SHEBANG_NOT_READ, with no I/O.
 */
export function shebangCost(
  file: string,
  cwd: string,
  sizes: { readonly plain: number; readonly filenameBytes: number; readonly argv0Bytes: number },
  limit: number,
  read: HeadReader = readHead,
): ShebangCost {
  const { plain, filenameBytes, argv0Bytes } = sizes;
  if (!shebangMayMatter(plain, filenameBytes, argv0Bytes, limit)) return SHEBANG_NOT_READ;
  const chain = shebangChain(file, cwd, read);
  return {
    chain,
    bytes: Math.max(0, shebangBytes(chain, filenameBytes, argv0Bytes)),
    checked: true,
  };
}
