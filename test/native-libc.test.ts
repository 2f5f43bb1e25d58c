/**
 * Telling the C library of a process: from its program interpreter (the
 * `PT_INTERP` of its executable), else the objects mapped into it, else Node's
 * report. The fixtures are recorded: /proc/self/maps of a musl program run on
 * Debian's `musl` (musl's own layout: `ld-musl-x86_64.so.1` is a symlink to
 * `…/libc.so`, and the mapping shows `libc.so`), the same program linked
 * against a real `ld-musl-x86_64.so.1` file (Alpine's layout), the same run
 * as `ld-musl-x86_64.so.1 app` (the loader as the program), and a glibc
 * process; and the first bytes (header, program headers, interpreter path) of
 * a musl program, musl's loader, a static musl program and Node.
 *
 * The interpreter decides before the mapped objects: red with the maps read
 * first (row libc-interpreter-first).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { elfInterpreter, libcFrom } from "../src/native-locate.js";

const fixture = (name: string) => readFileSync(join(import.meta.dirname, "fixtures/libc", name));
const maps = (name: string) => fixture(`${name}.maps`).toString("latin1");
const interpreterOf = (name: string) => {
  const found = elfInterpreter(fixture(`${name}.elf-head`));
  if (typeof found === "string") throw new Error(found);
  return found.interpreter;
};

describe("reading a program's interpreter", () => {
  it("reads PT_INTERP from the first bytes of an executable", () => {
    expect(interpreterOf("musl-program")).toBe("/lib/ld-musl-x86_64.so.1");
    expect(interpreterOf("glibc-node")).toBe("/lib64/ld-linux-x86-64.so.2");
  });

  it("gives null for a static program and for a loader run as the program", () => {
    expect(interpreterOf("musl-static")).toBeNull();
    expect(interpreterOf("musl-loader")).toBeNull();
  });

  it("says why bytes are not an executable it can read", () => {
    expect(elfInterpreter(Buffer.from("#!/bin/sh\n".padEnd(80)))).toBe("not an ELF file");
    expect(elfInterpreter(fixture("musl-program.elf-head").subarray(0, 120))).toBe(
      "truncated program headers",
    );
    expect(elfInterpreter(fixture("musl-program.elf-head").subarray(0, 580))).toBe(
      "truncated interpreter path",
    );
  });
});

describe("telling the C library", () => {
  it("takes musl from the interpreter, whatever the layout maps", () => {
    for (const layout of ["musl-own-layout", "musl-alpine-layout"]) {
      expect(libcFrom({ interpreter: interpreterOf("musl-program"), maps: maps(layout) })).toBe(
        "musl",
      );
    }
  });

  it("takes glibc from a glibc interpreter though a musl libc.so is mapped too (the interpreter decides)", () => {
    // A glibc Node that has mapped a musl build (a wrong addon it tried) still runs on glibc.
    const mixed = `${maps("glibc")}7f0000000000-7f0000001000 r-xp 00000000 08:01 42 /usr/lib/x86_64-linux-musl/libc.so\n`;
    expect(libcFrom({ interpreter: interpreterOf("glibc-node"), maps: mixed })).toBe("glibc");
    const alpine = `${maps("glibc")}7f0000000000-7f0000001000 r-xp 00000000 08:01 42 /lib/ld-musl-x86_64.so.1\n`;
    expect(libcFrom({ interpreter: interpreterOf("glibc-node"), maps: alpine })).toBe("glibc");
  });

  it("takes musl from the mapped objects in musl's own layout (libc.so) and Alpine's", () => {
    expect(libcFrom({ interpreter: undefined, maps: maps("musl-own-layout") })).toBe("musl");
    expect(libcFrom({ interpreter: undefined, maps: maps("musl-alpine-layout") })).toBe("musl");
  });

  it("takes musl for musl's loader run as the program (no interpreter: the mapped libc.so)", () => {
    expect(
      libcFrom({ interpreter: interpreterOf("musl-loader"), maps: maps("musl-loader-run") }),
    ).toBe("musl");
  });

  it("takes glibc from the interpreter and from the mapped libc.so.6", () => {
    expect(libcFrom({ interpreter: interpreterOf("glibc-node"), maps: undefined })).toBe("glibc");
    expect(libcFrom({ interpreter: null, maps: maps("glibc") })).toBe("glibc");
  });

  it("takes Node's report only when nothing else tells", () => {
    expect(libcFrom({ interpreter: null, maps: "", glibcRuntime: "2.36" })).toBe("glibc");
    expect(libcFrom({ interpreter: null, maps: "", glibcRuntime: null })).toBeUndefined();
    expect(
      libcFrom({ interpreter: null, maps: maps("musl-own-layout"), glibcRuntime: "2.36" }),
    ).toBe("musl");
  });
});
