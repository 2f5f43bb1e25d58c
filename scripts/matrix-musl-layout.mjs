// The matrix's musl layout rows: does the library tell musl in each file
// layout musl is installed in? A musl program (test/fixtures/print-maps.c,
// built with Debian's musl-gcc) runs in each layout and prints its
// /proc/self/maps; its executable's program interpreter is read as the
// library reads /proc/self/exe; and the library's own rule
// (dist/native-locate.js libcFrom) decides, from both and from the maps
// alone. No JavaScript runtime runs on musl here, so this is the evidence a
// musl runtime would hand the loader, gathered from real musl processes:
//   - musl's own install (Debian's musl): /lib/ld-musl-<arch>.so.1 is a
//     symlink to …/libc.so, and the mapping shows libc.so;
//   - Alpine's: ld-musl-<arch>.so.1 is the file itself (here a copy in a
//     temporary directory, named as the program's interpreter);
//   - musl's loader run as the program (`ld-musl-<arch>.so.1 app`, as a
//     runtime started through its loader is): no interpreter of its own.
import { spawnSync } from "node:child_process";
import {
  closeSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readSync,
  realpathSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const LOADER = "/lib/ld-musl-x86_64.so.1";

/** Why the rows cannot run here, or undefined. */
export function muslLayoutMissing() {
  if (process.arch !== "x64") return "x64 only (Debian's musl-gcc)";
  if (spawnSync("sh", ["-c", "command -v musl-gcc"]).status !== 0)
    return "needs musl-gcc (apt: musl-tools)";
  return undefined;
}

function head(path) {
  const fd = openSync(path, "r");
  try {
    const bytes = Buffer.alloc(16_384);
    return bytes.subarray(0, readSync(fd, bytes, 0, bytes.length, 0));
  } finally {
    closeSync(fd);
  }
}

/** One result per layout: { layout, interpreter, mapped, both, mapsAlone, ok }. */
export async function runMuslLayouts() {
  const { elfInterpreter, libcFrom } = await import(join(root, "dist/native-locate.js"));
  const dir = mkdtempSync(join(tmpdir(), "exactspawn-musl-layout-"));
  try {
    const source = join(root, "test/fixtures/print-maps.c");
    const own = join(dir, "app-own");
    const alpine = join(dir, "app-alpine");
    const alpineLoader = join(dir, "lib", "ld-musl-x86_64.so.1");
    mkdirSync(dirname(alpineLoader));
    copyFileSync(realpathSync(LOADER), alpineLoader);
    const build = (out, extra) => {
      const run = spawnSync("musl-gcc", ["-O2", "-o", out, ...extra, source], { encoding: "utf8" });
      if (run.status !== 0) throw new Error(`musl-gcc failed: ${run.stderr.trim()}`);
    };
    build(own, []);
    build(alpine, [`-Wl,--dynamic-linker=${alpineLoader}`]);
    const layouts = [
      { layout: "musl's own install (ld-musl → libc.so)", exe: own, argv: [own] },
      { layout: "Alpine's (ld-musl-x86_64.so.1 a file)", exe: alpine, argv: [alpine] },
      {
        layout: "musl's loader run as the program",
        exe: realpathSync(LOADER),
        argv: [LOADER, own],
      },
    ];
    return layouts.map(({ layout, exe, argv }) => {
      const run = spawnSync(argv[0], argv.slice(1), { encoding: "latin1" });
      const found = elfInterpreter(head(exe));
      const interpreter = typeof found === "string" ? undefined : found.interpreter;
      const maps = run.status === 0 ? run.stdout : undefined;
      const mapped =
        maps?.match(/\/\S*(?:ld-musl-[^/\s]*|libc\.musl-[^/\s]*|libc\.so)$/m)?.[0] ?? "none";
      const both = libcFrom({ interpreter, maps });
      const mapsAlone = libcFrom({ interpreter: undefined, maps });
      return {
        layout,
        interpreter: (interpreter ?? "none").replace(dir, "<tmp>"),
        mapped: mapped.replace(dir, "<tmp>"),
        both,
        mapsAlone,
        ok: both === "musl" && mapsAlone === "musl",
      };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
