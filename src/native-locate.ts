/**
 * Finds the addon file that fits this process: its ELF machine must be this
 * process's architecture and the C library it links must be this process's.
 * node-gyp-build checks neither (it loads build/Release as it is, and an
 * untagged prebuild on musl too), so the choice is made here, and every
 * candidate refused is named with its reason.
 *
 * Order: build/Release (a local build, unless PREBUILDS_ONLY is set), then
 * prebuilds/linux-<arch>/exactspawn.<libc>.node, then the untagged
 * prebuilds/linux-<arch>/exactspawn.node. EXACTSPAWN_PREBUILD replaces the
 * package root (a sanitizer build for `npm run test:asan`).
 */
import { closeSync, existsSync, openSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";

export type Libc = "glibc" | "musl";

/**
 * What the C library of a process can be told from: its program interpreter
 * (`PT_INTERP` of /proc/self/exe; null when it has none: a static program, or
 * a loader run as a program), the text of /proc/self/maps, and under Node the
 * glibc version its report gives (null when the report has none; undefined
 * when not asked: another runtime).
 */
export interface LibcEvidence {
  readonly interpreter: string | null | undefined;
  readonly maps: string | undefined;
  readonly glibcRuntime?: string | null | undefined;
}

/** The C library an interpreter's file name belongs to (musl's `ld-musl-<arch>.so.1`, glibc's `ld-linux*`/`ld64.so.*`). */
function libcOfInterpreter(path: string): Libc | undefined {
  const name = path.slice(path.lastIndexOf("/") + 1);
  if (/^ld-musl-.*\.so\.1$/.test(name)) return "musl";
  if (/^ld-linux[^/]*\.so\.\d$|^ld64\.so\.\d$|^ld\.so\.\d$/.test(name)) return "glibc";
  return undefined;
}

/**
 * The C library a mapped object names: Alpine's `ld-musl-*.so.1` or
 * `libc.musl-*.so.1`, musl's own install (and Debian's `musl`) `…/libc.so`
 * (glibc's `libc.so` is a linker script, never mapped), glibc's `libc.so.6`.
 */
function libcOfMaps(maps: string): Libc | undefined {
  if (/\/ld-musl-[^/\n]*\.so\.1$|\/libc\.musl-[^/\n]*\.so\.1$|\/libc\.so$/m.test(maps))
    return "musl";
  if (/\/libc\.so\.6$|\/libc-2\.\d+\.so$/m.test(maps)) return "glibc";
  return undefined;
}

/**
 * The C library the evidence shows, pure: the interpreter the kernel started
 * the process with decides; without one that names a C library, the mapped
 * objects; without either, Node's report (a glibc version means glibc).
 * Undefined when nothing tells.
 */
export function libcFrom(evidence: LibcEvidence): Libc | undefined {
  const interpreter = evidence.interpreter ? libcOfInterpreter(evidence.interpreter) : undefined;
  if (interpreter !== undefined) return interpreter;
  const mapped = evidence.maps === undefined ? undefined : libcOfMaps(evidence.maps);
  if (mapped !== undefined) return mapped;
  return evidence.glibcRuntime ? "glibc" : undefined;
}

/** Enough of an executable's start for its program headers and interpreter path. */
const EXE_HEAD_BYTES = 16_384;

/** The program interpreter of /proc/self/exe; null without one, undefined if unreadable. */
function selfInterpreter(): string | null | undefined {
  let fd: number | undefined;
  try {
    fd = openSync("/proc/self/exe", "r");
    const head = Buffer.alloc(EXE_HEAD_BYTES);
    const read = readSync(fd, head, 0, head.length, 0);
    const found = elfInterpreter(head.subarray(0, read));
    return typeof found === "string" ? undefined : found.interpreter;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function readMaps(): string | undefined {
  try {
    return readFileSync("/proc/self/maps", "latin1");
  } catch {
    return undefined;
  }
}

/** Node's own glibc version (its report's header), or null; undefined under another runtime. */
function nodeGlibcRuntime(): string | null | undefined {
  if (process.versions["bun"] !== undefined || "Deno" in globalThis) return undefined;
  const report = process.report?.getReport?.() as
    | { header?: { glibcVersionRuntime?: string } }
    | undefined;
  return report?.header?.glibcVersionRuntime ?? null;
}

/**
 * The C library this process runs on: what its program interpreter is, else
 * what is mapped into it, else (Node only) its report; undefined if nothing tells.
 */
export function hostLibc(): Libc | undefined {
  const interpreter = selfInterpreter();
  const maps = readMaps();
  const quick = libcFrom({ interpreter, maps });
  if (quick !== undefined) return quick;
  return libcFrom({ interpreter, maps, glibcRuntime: nodeGlibcRuntime() });
}

/**
 * The `PT_INTERP` path of a 64-bit little-endian ELF file from its first
 * bytes (null when it has none); a string says why they are not such a file
 * or end before the path does.
 */
export function elfInterpreter(bytes: Buffer): { interpreter: string | null } | string {
  if (bytes.length < 64 || bytes.readUInt32BE(0) !== 0x7f454c46) return "not an ELF file";
  if (bytes[4] !== 2 || bytes[5] !== 1) return "not a 64-bit little-endian ELF file";
  const phoff = Number(bytes.readBigUInt64LE(32));
  const phentsize = bytes.readUInt16LE(54);
  const phnum = bytes.readUInt16LE(56);
  for (let i = 0; i < phnum; i++) {
    const at = phoff + i * phentsize;
    if (at + 56 > bytes.length) return "truncated program headers";
    if (bytes.readUInt32LE(at) !== 3) continue;
    const offset = Number(bytes.readBigUInt64LE(at + 8));
    const size = Number(bytes.readBigUInt64LE(at + 32));
    if (offset + size > bytes.length || size === 0) return "truncated interpreter path";
    const end = bytes.indexOf(0, offset);
    const stop = end < 0 || end > offset + size ? offset + size : end;
    return { interpreter: bytes.toString("latin1", offset, stop) };
  }
  return { interpreter: null };
}

/** What an addon file is built for, as read from its ELF header and dynamic section. */
export interface ElfFacts {
  /** The Node architecture name ("x64", "arm64"…) or "elf-machine-<n>". */
  arch: string;
  /** The C library its DT_NEEDED entries name; "none" when it needs none (static). */
  libc: Libc | "none";
}

const MACHINES: Record<number, string> = {
  3: "ia32",
  8: "mips",
  20: "ppc",
  21: "ppc64",
  22: "s390x",
  40: "arm",
  62: "x64",
  183: "arm64",
  243: "riscv64",
  258: "loong64",
};

/** Reads the facts of a 64-bit little-endian ELF shared object; a string says why it is not one. */
export function elfFacts(bytes: Buffer): ElfFacts | string {
  if (bytes.length < 64 || bytes.readUInt32BE(0) !== 0x7f454c46) return "not an ELF file";
  const machine = bytes.readUInt16LE(18);
  const arch = MACHINES[machine] ?? `elf-machine-${machine}`;
  if (bytes[4] !== 2 || bytes[5] !== 1)
    return `a ${arch} ELF file that is not 64-bit little-endian`;
  const phoff = Number(bytes.readBigUInt64LE(32));
  const phentsize = bytes.readUInt16LE(54);
  const phnum = bytes.readUInt16LE(56);
  const loads: { offset: number; vaddr: number; size: number }[] = [];
  let dynamic: { offset: number; size: number } | undefined;
  for (let i = 0; i < phnum; i++) {
    const at = phoff + i * phentsize;
    if (at + 56 > bytes.length) return `a ${arch} ELF file with truncated program headers`;
    const type = bytes.readUInt32LE(at);
    const offset = Number(bytes.readBigUInt64LE(at + 8));
    const vaddr = Number(bytes.readBigUInt64LE(at + 16));
    const size = Number(bytes.readBigUInt64LE(at + 32));
    if (type === 1) loads.push({ offset, vaddr, size });
    if (type === 2) dynamic = { offset, size };
  }
  if (dynamic === undefined) return { arch, libc: "none" };
  const needed: number[] = [];
  let strtab: number | undefined;
  for (let at = dynamic.offset; at + 16 <= dynamic.offset + dynamic.size; at += 16) {
    if (at + 16 > bytes.length) return `a ${arch} ELF file with a truncated dynamic section`;
    const tag = bytes.readBigInt64LE(at);
    const value = Number(bytes.readBigUInt64LE(at + 8));
    if (tag === 0n) break;
    if (tag === 1n) needed.push(value);
    if (tag === 5n) strtab = value;
  }
  const load = loads.find(
    (l) => strtab !== undefined && strtab >= l.vaddr && strtab < l.vaddr + l.size,
  );
  if (strtab === undefined || load === undefined) return { arch, libc: "none" };
  const base = load.offset + (strtab - load.vaddr);
  const names = needed.map((n) => {
    const start = base + n;
    const end = bytes.indexOf(0, start);
    return bytes.toString("latin1", start, end < 0 ? bytes.length : end);
  });
  if (names.some((n) => n === "libc.so.6")) return { arch, libc: "glibc" };
  if (names.some((n) => /musl/.test(n) || n === "libc.so")) return { arch, libc: "musl" };
  return { arch, libc: "none" };
}

/**
 * `path` is the first file that fits; `fitting` every one in order (the
 * loader tries the next when one fails to load); `refused` why each other was not taken.
 */
export type Located =
  | { path: string; fitting: string[]; refused: string[] }
  | { path: undefined; fitting: []; refused: string[]; reason: string };

/** The package root the addon is looked for under (EXACTSPAWN_PREBUILD replaces it). */
function searchRoot(packageRoot: string): string {
  return process.env["EXACTSPAWN_PREBUILD"] || packageRoot;
}

/**
 * The addon files under the package root that fit this process, first choice
 * first, with the reasons any other candidate was refused; or why none fits.
 */
export function locateAddon(packageRoot: string, libc: Libc | undefined = hostLibc()): Located {
  const root = searchRoot(packageRoot);
  const arch = process.arch;
  const dir = join(root, "prebuilds", `${process.platform}-${arch}`);
  const candidates = [
    ...(process.env["PREBUILDS_ONLY"] ? [] : [join(root, "build/Release/exactspawn.node")]),
    ...(libc === undefined
      ? [join(dir, "exactspawn.glibc.node"), join(dir, "exactspawn.musl.node")]
      : [join(dir, `exactspawn.${libc}.node`)]),
    join(dir, "exactspawn.node"),
  ];
  const refused: string[] = [];
  const fitting: string[] = [];
  for (const path of candidates) {
    if (!existsSync(path)) continue;
    let facts: ElfFacts | string;
    try {
      facts = elfFacts(readFileSync(path));
    } catch (error) {
      refused.push(`${path}: unreadable (${(error as NodeJS.ErrnoException).code ?? "error"})`);
      continue;
    }
    if (typeof facts === "string") refused.push(`${path}: ${facts}`);
    else if (facts.arch !== arch) refused.push(`${path}: built for ${facts.arch}, not ${arch}`);
    else if (facts.libc !== "none" && libc !== undefined && facts.libc !== libc) {
      refused.push(`${path}: linked against ${facts.libc}, this process runs on ${libc}`);
    } else fitting.push(path);
  }
  const [first] = fitting;
  if (first !== undefined) return { path: first, fitting, refused };
  const tuple = `${process.platform}-${arch}${libc === undefined ? "" : `-${libc}`}`;
  const reason =
    refused.length === 0
      ? `No native build was found for ${tuple} under ${root}`
      : `No native build fits ${tuple}: ${refused.join("; ")}`;
  return { path: undefined, fitting: [], refused, reason };
}
