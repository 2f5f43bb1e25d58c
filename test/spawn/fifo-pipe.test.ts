/**
 * createPipe's pipe on the child_process fallback (src/spawn/fifo-pipe.ts):
 * a FIFO in a private directory, opened, then its name and directory
 * removed before it returns, so nothing is left in TMPDIR and no other
 * process can open it by name. Seen red with the removal left out (row
 * fifo-pipe-removed).
 */
import {
  closeSync,
  fstatSync,
  mkdtempSync,
  readdirSync,
  readSync,
  rmSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fifoPipe } from "../../src/spawn/fifo-pipe.js";

const saved = process.env["TMPDIR"];
const scratch = mkdtempSync(join(tmpdir(), "exactspawn-fifo-test-"));
afterEach(() => {
  if (saved === undefined) delete process.env["TMPDIR"];
  else process.env["TMPDIR"] = saved;
});

describe("fifoPipe", () => {
  it("gives two connected ends and leaves nothing in TMPDIR", () => {
    process.env["TMPDIR"] = scratch;
    const [read, write] = fifoPipe();
    try {
      expect(readdirSync(scratch)).toEqual([]);
      expect(fstatSync(read).isFIFO()).toBe(true);
      writeSync(write, "through");
      const buffer = Buffer.alloc(16);
      expect(buffer.toString("latin1", 0, readSync(read, buffer))).toBe("through");
    } finally {
      closeSync(read);
      closeSync(write);
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
