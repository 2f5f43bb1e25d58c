/**
 * Loading the addon: a file that fits on paper but that the runtime refuses
 * does not stop the loader from trying the next fitting one, and the status
 * names the file the dynamic loader really mapped.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../src/native.js";
import { locateAddon } from "../src/native-locate.js";
import { loadedFile, mappedNodeFiles, openFirst } from "../src/native-open.js";

describe("opening the first file that loads", () => {
  it("names each failure and takes the next file", () => {
    const tried: string[] = [];
    const opened = openFirst(["/a.node", "/b.node"], (path) => {
      tried.push(path);
      if (path === "/a.node") throw new Error("/a.node: wrong C library\nmore");
      return { ok: true };
    });
    expect(tried).toEqual(["/a.node", "/b.node"]);
    expect(opened).toEqual({ module: { ok: true }, path: "/b.node" });
  });

  it("gives every failure when none loads", () => {
    const opened = openFirst(["/a.node"], () => {
      throw new Error("no");
    });
    expect(opened).toEqual({ module: undefined, failures: ["/a.node: no"] });
  });
});

describe("the file the loader mapped", () => {
  const maps = [
    "7f0-7f1 r--p 00000000 fe:00 1  /opt/app/node_modules/exactspawn/prebuilds/linux-x64/exactspawn.musl.node",
    "7f1-7f2 r-xp 00001000 fe:00 1  /opt/app/node_modules/exactspawn/prebuilds/linux-x64/exactspawn.musl.node",
    "7f2-7f3 r--p 00000000 fe:00 2  /usr/lib/x86_64-linux-musl/libc.so",
    "7f3-7f4 rw-p 00000000 00:00 0 ",
  ].join("\n");

  it("lists the mapped .node files once each", () => {
    expect(mappedNodeFiles(maps)).toEqual([
      "/opt/app/node_modules/exactspawn/prebuilds/linux-x64/exactspawn.musl.node",
    ]);
  });

  it("is the one .node file mapped since before the load", () => {
    expect(loadedFile("/nowhere/x.node", [], mappedNodeFiles(maps))).toBe(
      "/opt/app/node_modules/exactspawn/prebuilds/linux-x64/exactspawn.musl.node",
    );
    expect(loadedFile("/nowhere/x.node", mappedNodeFiles(maps), mappedNodeFiles(maps))).toBe(
      undefined,
    );
  });
});

const shipped = locateAddon(PACKAGE_ROOT).path;

describe.runIf(shipped !== undefined && process.env["EXACTSPAWN_NATIVE"] !== "0")(
  "a package whose first fitting file does not load",
  () => {
    // Made in beforeAll: a skipped describe's body still runs, its hooks do not.
    let root = "";
    let dir = "";
    beforeAll(() => {
      root = mkdtempSync(join(tmpdir(), "exactspawn-open-"));
      dir = join(root, "prebuilds", `linux-${process.arch}`);
      mkdirSync(dir, { recursive: true });
      const good = readFileSync(shipped as string);
      // The same file marked as an executable (e_type 2): its machine and C
      // library read as fitting, but the dynamic loader refuses it.
      const refused = Buffer.from(good);
      refused.writeUInt16LE(2, 16);
      const libc = /\.musl\.node$/.test(shipped as string) ? "musl" : "glibc";
      writeFileSync(join(dir, `exactspawn.${libc}.node`), refused);
      writeFileSync(join(dir, "exactspawn.node"), good);
    });
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    it("loads the next one, says nothing, and names it as the mapped file", () => {
      const run = spawnSync(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `import { nativeStatus } from "./dist/index.js";
           console.log(JSON.stringify(nativeStatus()));`,
        ],
        {
          cwd: PACKAGE_ROOT,
          encoding: "utf8",
          env: {
            ...process.env,
            EXACTSPAWN_NATIVE: "required",
            PREBUILDS_ONLY: "1",
            EXACTSPAWN_PREBUILD: root,
          },
        },
      );
      expect(run.stderr).toBe("");
      expect(JSON.parse(run.stdout)).toMatchObject({
        loaded: true,
        file: join(dir, "exactspawn.node"),
      });
    });
  },
);
