/**
 * The `#!` model's parts without the kernel: how a first line splits, when the
 * file is read at all, and what each level adds. The kernel itself is the
 * oracle in shebang-kernel.test.ts; these cases pin the corners it does not
 * reach cheaply (CR, NUL, no newline, unreadable files, loops).
 */
import { Buffer } from "node:buffer";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { envEntries } from "../src/env/env-input.js";
import { footprintOf } from "../src/limits.js";
import {
  MAX_SCRIPT_DEPTH,
  MAX_SHEBANG_BYTES,
  parseShebang,
  readHead,
  shebangBytes,
  shebangChain,
} from "../src/shebang.js";

const text = (line: ReturnType<typeof parseShebang>) =>
  line === null
    ? null
    : { path: line.interpreter.toString("latin1"), arg: line.arg?.toString("latin1") ?? null };
const parse = (head: string) => text(parseShebang(Buffer.from(head, "latin1")));

describe("parseShebang", () => {
  it.each([
    ["#!/bin/sh\necho", "/bin/sh", null],
    ["#!/bin/sh -e\n", "/bin/sh", "-e"],
    ["#!/bin/sh\t-e\n", "/bin/sh", "-e"],
    ["#! \t/bin/sh \t -e  x \t\n", "/bin/sh", "-e  x"],
    ["#!/bin/sh", "/bin/sh", null],
    ["#!/bin/sh -e", "/bin/sh", "-e"],
    ["#!/bin/sh\r\n", "/bin/sh\r", null],
    ["#!/bin/sh -e\0ignored\n", "/bin/sh", "-e"],
    ["#!/bin/sh \n", "/bin/sh", null],
  ])("%j → %s %s", (head, path, arg) => {
    expect(parse(head)).toEqual({ path, arg });
  });

  it.each([
    ["no #!", "/bin/sh\n"],
    ["only #!", "#!\n"],
    ["only blanks", "#! \t \n"],
    ["an empty file", ""],
    ["an interpreter path cut by the buffer's end", `#!/${"p".repeat(300)}`],
  ])("is not a script: %s", (_, head) => {
    expect(parse(head)).toBeNull();
  });

  it("keeps an argument cut by the buffer's end to byte 254", () => {
    const line = parse(`#!/bin/true ${"a".repeat(300)}\n`);
    expect(line).toEqual({ path: "/bin/true", arg: "a".repeat(243) });
  });

  it("drops blanks before the cut, as before a newline", () => {
    const line = parse(`#!/bin/true ${"a".repeat(200)}${" ".repeat(100)}`);
    expect(line).toEqual({ path: "/bin/true", arg: "a".repeat(200) });
  });

  it("never adds more than MAX_SHEBANG_BYTES for one line", () => {
    for (let cut = 3; cut < 256; cut++) {
      const head = `#!/${"i".repeat(cut - 3)} ${"a".repeat(400)}`;
      const line = parseShebang(Buffer.from(head));
      if (line === null) continue;
      expect(shebangBytes([line], 0, 0)).toBeLessThanOrEqual(MAX_SHEBANG_BYTES);
    }
    const longest = parseShebang(Buffer.from(`#!/${"i".repeat(300)} \n`));
    expect(longest).toBeNull();
  });
});

/** A file system of heads; records every read. */
function files(heads: Record<string, string>) {
  const reads: string[] = [];
  const read = (path: Buffer) => {
    reads.push(path.toString());
    const head = heads[path.toString()];
    return head === undefined ? null : Buffer.from(head);
  };
  return { read, reads };
}

describe("readHead", () => {
  const dir = mkdtempSync(join(tmpdir(), "exactspawn-readhead-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reads the first 256 bytes of a regular file", () => {
    const file = join(dir, "script");
    writeFileSync(file, `#!/bin/sh\n${"x".repeat(1000)}`);
    expect(readHead(Buffer.from(file))).toEqual(readFileSync(file).subarray(0, 256));
  });

  // Without O_NONBLOCK the open waits for a writer forever (seen: the child is
  // killed by the timeout), so the FIFO is tried in a child process.
  it("returns null for a FIFO at once, and for a directory or a missing file", () => {
    const fifo = join(dir, "fifo");
    execFileSync("mkfifo", [fifo]);
    const module = new URL("../dist/shebang.js", import.meta.url).href;
    const probe = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { readHead } from ${JSON.stringify(module)};
         process.stdout.write(String(readHead(Buffer.from(process.argv[1]))));`,
        fifo,
      ],
      { encoding: "utf8", timeout: 10_000 },
    );
    expect(probe).toMatchObject({ status: 0, stdout: "null" });
    expect(readHead(Buffer.from(dir))).toBeNull();
    expect(readHead(Buffer.from(join(dir, "missing")))).toBeNull();
  });
});

describe("shebangChain", () => {
  it("follows interpreters, resolving relative ones against the child's cwd", () => {
    const fs = files({ "/w/s": "#!bin/inner -x\n", "/w/bin/inner": "#!/bin/sh\n" });
    const chain = shebangChain("s", "/w", fs.read).map(text);
    expect(chain).toEqual([
      { path: "bin/inner", arg: "-x" },
      { path: "/bin/sh", arg: null },
    ]);
    expect(fs.reads).toEqual(["/w/s", "/w/bin/inner", "/bin/sh"]);
  });

  it("stops after the kernel's depth limit", () => {
    const fs = files({ "/loop": "#!/loop\n" });
    expect(shebangChain("/loop", "/", fs.read)).toHaveLength(MAX_SCRIPT_DEPTH);
  });

  it("treats an unreadable file as a binary", () => {
    expect(shebangChain("/missing", "/", files({}).read)).toEqual([]);
  });
});

describe("footprintOf with a #! file", () => {
  const limits = { execLimit: 4096, maxArgStrlen: 131_072 };
  const file = "/s";
  const argv = ["/s"];
  const fixed = 3 + 3 + 8 * 2; // argv "/s\0", filename "/s\0", pointers (argv + 1 variable)
  const entries = (bytes: number) => envEntries({ V: "v".repeat(bytes - 3) }, "test");

  it("does not read the file while even the longest #! chain would fit", () => {
    const fs = files({ "/s": "#!/bin/sh\n" });
    const room = limits.execLimit - fixed - MAX_SCRIPT_DEPTH * MAX_SHEBANG_BYTES;
    const fit = footprintOf(file, argv, entries(room), limits, "/", fs.read);
    expect(fs.reads).toEqual([]);
    expect(fit).toMatchObject({ fits: true, scriptChecked: false, scriptBytes: 0 });
  });

  it("reads it one byte later and counts what the loader copies", () => {
    const fs = files({ "/s": "#!/bin/sh -e\n" });
    const room = limits.execLimit - fixed - MAX_SCRIPT_DEPTH * MAX_SHEBANG_BYTES + 1;
    const fit = footprintOf(file, argv, entries(room), limits, "/", fs.read);
    expect(fs.reads).toEqual(["/s", "/bin/sh"]);
    expect(fit).toMatchObject({ scriptChecked: true, scriptBytes: 11 });
    expect(fit.footprint).toBe(fixed + room + 11);
    expect(fit.interpreters).toEqual([{ path: "/bin/sh", arg: "-e" }]);
  });

  it("does not read a file whose plain image is already over the limit", () => {
    const fs = files({ "/s": "#!/bin/sh\n" });
    const fit = footprintOf(file, argv, entries(5000), limits, "/", fs.read);
    expect(fs.reads).toEqual([]);
    expect(fit).toMatchObject({ fits: false, scriptChecked: false });
  });

  it("frees argv[0] and copies the filename in its place", () => {
    const fs = files({ "/s": "#!/bin/sh\n" });
    const near = entries(limits.execLimit - fixed - 10);
    const long = footprintOf(file, ["/long-argv0"], near, limits, "/", fs.read);
    const short = footprintOf(file, ["/s"], near, limits, "/", fs.read);
    // "/bin/sh\0" is 8 bytes; "/s\0" replaces itself in one and "/long-argv0\0" (12) in the
    // other, where the rewrite frees a byte: the plain image, checked first, is the peak.
    expect(short.scriptBytes).toBe(8);
    expect(long.interpreters).toEqual([{ path: "/bin/sh", arg: null }]);
    expect(long.scriptBytes).toBe(0);
  });
});
