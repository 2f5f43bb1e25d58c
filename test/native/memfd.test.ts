/**
 * The addon's sealedMemfd(name, bytes): the bytes at offset 0, close-on-exec,
 * sealed against writing, growing and shrinking (checked through the kernel,
 * not the addon), and TypeErrors for wrong arguments. Needs the addon.
 */
import { closeSync, ftruncateSync, readFileSync, readlinkSync, readSync, writeSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type NativeBinding, nativeBinding } from "../../src/native.js";

const binding = nativeBinding() as
  | (NativeBinding & Required<Pick<NativeBinding, "sealedMemfd">>)
  | null;

describe.runIf(binding?.sealedMemfd !== undefined)("sealedMemfd", () => {
  const make = (name: string, bytes: Buffer) => binding!.sealedMemfd(name, bytes);

  it("holds exactly the bytes, at offset 0, close-on-exec, under /memfd:<name>", () => {
    const bytes = Buffer.from([0, 1, 2, 0xff, 0x0a, 0x00]);
    const fd = make("exactspawn-test", bytes);
    try {
      expect(readlinkSync(`/proc/self/fd/${fd}`)).toBe("/memfd:exactspawn-test (deleted)");
      const info = readFileSync(`/proc/self/fdinfo/${fd}`, "utf8");
      expect(/pos:\s+0\n/.test(info)).toBe(true);
      const flags = Number.parseInt(/flags:\s+([0-7]+)/.exec(info)![1]!, 8);
      expect(flags & 0o2000000).toBe(0o2000000);
      const back = Buffer.alloc(16);
      expect(readSync(fd, back, 0, 16, null)).toBe(bytes.length);
      expect(back.subarray(0, bytes.length).equals(bytes)).toBe(true);
    } finally {
      closeSync(fd);
    }
  });

  it("is sealed: writing, growing and shrinking fail with EPERM", () => {
    const fd = make("sealed", Buffer.from("fixed"));
    try {
      expect(() => writeSync(fd, "x", 0)).toThrow(expect.objectContaining({ code: "EPERM" }));
      expect(() => ftruncateSync(fd, 100)).toThrow(expect.objectContaining({ code: "EPERM" }));
      expect(() => ftruncateSync(fd, 1)).toThrow(expect.objectContaining({ code: "EPERM" }));
      expect(readFileSync(`/proc/self/fd/${fd}`, "utf8")).toBe("fixed");
      expect(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8")).toMatch(/flags/);
    } finally {
      closeSync(fd);
    }
  });

  it("takes an empty buffer and a large one", () => {
    const empty = make("empty", Buffer.alloc(0));
    const large = make("large", Buffer.alloc(8 * 1024 * 1024, 0x61));
    try {
      expect(readFileSync(`/proc/self/fd/${empty}`).length).toBe(0);
      expect(readFileSync(`/proc/self/fd/${large}`).length).toBe(8 * 1024 * 1024);
    } finally {
      closeSync(empty);
      closeSync(large);
    }
  });

  it.each([
    ["no arguments", []],
    ["a number as name", [1, Buffer.alloc(1)]],
    ["a string as bytes", ["n", "bytes"]],
    ["a name with NUL", ["a\0b", Buffer.alloc(1)]],
    ["an extra argument", ["n", Buffer.alloc(1), 1]],
  ])("refuses %s with a TypeError", (_label, args) => {
    const call = binding!.sealedMemfd as unknown as (...a: unknown[]) => number;
    expect(() => call(...args)).toThrow(TypeError);
  });
});
