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
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export type Libc = "glibc" | "musl";

/** The C library of this process, from the objects mapped into it; undefined if neither is seen. */
export function hostLibc(): Libc | undefined {
  let maps: string;
  try {
    maps = readFileSync("/proc/self/maps", "latin1");
  } catch {
    return undefined;
  }
  if (/\/ld-musl-[^/\n]*\.so\.1$|\/libc\.musl-[^/\n]*\.so\.1$/m.test(maps)) return "musl";
  if (/\/libc\.so\.6$|\/libc-2\.\d+\.so$/m.test(maps)) return "glibc";
  return undefined;
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

export type Located =
  | { path: string; refused: string[] }
  | { path: undefined; refused: string[]; reason: string };

/** The package root the addon is looked for under (EXACTSPAWN_PREBUILD replaces it). */
function searchRoot(packageRoot: string): string {
  return process.env["EXACTSPAWN_PREBUILD"] || packageRoot;
}

/**
 * The first addon file under the package root that fits this process, with
 * the reasons any earlier candidate was refused; or why none fits.
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
    } else return { path, refused };
  }
  const tuple = `${process.platform}-${arch}${libc === undefined ? "" : `-${libc}`}`;
  const reason =
    refused.length === 0
      ? `No native build was found for ${tuple} under ${root}`
      : `No native build fits ${tuple}: ${refused.join("; ")}`;
  return { path: undefined, refused, reason };
}
