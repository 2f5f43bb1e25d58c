import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { SpillError } from "../../src/errors.js";
import { setLogger } from "../../src/log.js";
import {
  writeScriptFile,
  writeSpillFiles,
  writeSpillFilesInto,
} from "../../src/step/spill-files.js";
import { captureLog } from "../helpers/capture-log.js";

const SENTINEL = "SENTINEL-f1les";
const roots: string[] = [];
function testRoot(): string {
  const dir = mkdtempSync(join(tmpdir(), "exactspawn-test-"));
  roots.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of roots) rmSync(dir, { recursive: true, force: true });
});
afterEach(() => setLogger(undefined));

const env = new Map([
  ["RECIPE_VAR_a", `${SENTINEL}-a`],
  ["B", `${SENTINEL}-b é`],
  ["KEEP", "not spilled"],
]);
const plan = { spilled: [{ name: "RECIPE_VAR_a" }, { name: "B" }] };

function mode(path: string): number {
  return statSync(path).mode & 0o777;
}

function allText(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  while (current instanceof Error) {
    parts.push(current.message, current.stack ?? "", JSON.stringify(current));
    current = current.cause;
  }
  return parts.join("\n");
}

describe("writeSpillFiles", () => {
  it("writes v0, v1… in plan order into a fresh 0700 directory, files 0600", async () => {
    const capture = captureLog();
    setLogger(capture.logger);
    const root = testRoot();
    const files = await writeSpillFiles(plan, env, { tmpdir: root });
    expect(files.dir).toMatch(new RegExp(`^${root}/exactspawn-spill-[A-Za-z0-9]{6}$`));
    expect(mode(files.dir!)).toBe(0o700);
    expect(files.files).toEqual([
      { name: "RECIPE_VAR_a", path: join(files.dir!, "v0") },
      { name: "B", path: join(files.dir!, "v1") },
    ]);
    for (const { name, path } of files.files) {
      expect(mode(path)).toBe(0o600);
      expect(readFileSync(path, "utf8")).toBe(env.get(name));
    }
    expect(readdirSync(files.dir!).sort()).toEqual(["v0", "v1"]);
    expect(capture.lines.join("")).not.toContain(SENTINEL);
    await files.remove();
    expect(existsSync(files.dir!)).toBe(false);
    await files.remove();
    expect(readdirSync(root)).toEqual([]);
  });

  it("gives each step its own directory", async () => {
    const root = testRoot();
    const [one, two] = await Promise.all([
      writeSpillFiles(plan, env, { tmpdir: root }),
      writeSpillFiles(plan, env, { tmpdir: root }),
    ]);
    expect(one.dir).not.toBe(two.dir);
    await Promise.all([one.remove(), two.remove()]);
  });

  it("refuses an env without the spilled values (plan.inline passed by mistake)", async () => {
    const root = testRoot();
    await expect(writeSpillFiles(plan, new Map([["KEEP", "x"]]), { tmpdir: root })).rejects.toThrow(
      /no value for spilled variable RECIPE_VAR_a/,
    );
    expect(readdirSync(root)).toEqual([]);
  });

  it("creates nothing when nothing spilled", async () => {
    const root = testRoot();
    const files = await writeSpillFiles({ spilled: [] }, env, { tmpdir: root });
    expect(files).toMatchObject({ dir: undefined, files: [] });
    await files.remove();
    expect(readdirSync(root)).toEqual([]);
  });

  it("never follows a symlink planted at a file's path", async () => {
    const root = testRoot();
    const dir = join(root, "private");
    mkdirSync(dir, { mode: 0o700 });
    const target = join(root, "target");
    writeFileSync(target, "original");
    symlinkSync(target, join(dir, "v0"));
    const error = await writeSpillFilesInto(dir, [{ name: "RECIPE_VAR_a", value: SENTINEL }]).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SpillError);
    expect((error as SpillError).ioCode).toBe("EEXIST");
    expect(readFileSync(target, "utf8")).toBe("original");
    expect(lstatSync(join(dir, "v0")).isSymbolicLink()).toBe(true);
  });

  it("removes the partial directory when a write fails (symlink raced in through mkdtemp)", async () => {
    const root = testRoot();
    const target = join(root, "target");
    writeFileSync(target, "original");
    let made = "";
    const error = await writeSpillFiles(plan, env, {
      tmpdir: root,
      mkdtemp: async (prefix) => {
        made = await mkdtemp(prefix);
        symlinkSync(target, join(made, "v1"));
        return made;
      },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SpillError);
    const spillError = error as SpillError;
    expect(spillError).toMatchObject({
      code: "ERR_EXACTSPAWN_SPILL_WRITE",
      variable: "B",
      bytes: Buffer.byteLength(env.get("B")!),
      ioCode: "EEXIST",
    });
    expect(spillError.message).toBe(
      `failed to spill B (${Buffer.byteLength(env.get("B")!)} bytes): EEXIST`,
    );
    expect(existsSync(made)).toBe(false);
    expect(readFileSync(target, "utf8")).toBe("original");
    expect(allText(error)).not.toContain(SENTINEL);
  });

  it.each([
    ["a TMPDIR that does not exist", (root: string) => join(root, "missing"), "ENOENT"],
    [
      "a TMPDIR that is a file",
      (root: string) => {
        writeFileSync(join(root, "file"), "");
        return join(root, "file");
      },
      "ENOTDIR",
    ],
  ])("fails with the variable, its length and the code for %s", async (_l, makeTmp, code) => {
    const capture = captureLog();
    setLogger(capture.logger);
    const error = await writeSpillFiles(plan, env, { tmpdir: makeTmp(testRoot()) }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SpillError);
    expect(error).toMatchObject({
      variable: "RECIPE_VAR_a",
      bytes: Buffer.byteLength(env.get("RECIPE_VAR_a")!),
      ioCode: code,
    });
    expect((error as Error).message).toContain("RECIPE_VAR_a");
    expect((error as Error).message).toContain(`(${env.get("RECIPE_VAR_a")!.length} bytes)`);
    expect(allText(error)).not.toContain(SENTINEL);
    expect(capture.lines.join("")).not.toContain(SENTINEL);
  });
});

describe("writeScriptFile", () => {
  it("writes the script 0600 in a private 0700 directory and removes it", async () => {
    const root = testRoot();
    const script = await writeScriptFile("echo hi\n", { tmpdir: root });
    expect(script.path).toBe(join(script.dir, "script.sh"));
    expect(script.dir).toMatch(/\/exactspawn-script-[A-Za-z0-9]{6}$/);
    expect(mode(script.dir)).toBe(0o700);
    expect(mode(script.path)).toBe(0o600);
    expect(readFileSync(script.path, "utf8")).toBe("echo hi\n");
    await script.remove();
    await script.remove();
    expect(readdirSync(root)).toEqual([]);
  });
});
