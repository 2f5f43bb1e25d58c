/**
 * Which writable paths the read-only view clones (src/spawn/sandbox-view.ts),
 * decided in TypeScript so the addon only carries the list (issue 38, item 2:
 * the addon had a `beneath` of its own, strict where TypeScript's is
 * inclusive). A fast-check property against a brute-force oracle.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nativeBinding } from "../../src/native.js";
import { viewPaths } from "../../src/spawn/sandbox-view.js";
import { rawSandboxSpawn } from "../helpers/raw-sandbox-spawn.js";

const binding = nativeBinding();

describe("the read-only view's writable mounts", () => {
  it("clones each path once and none beneath another; none at all when / is writable", () => {
    expect(viewPaths(["/w/a", "/w/a/b", "/w/ab", "/w/a", "/x"])).toEqual(["/w/a", "/w/ab", "/x"]);
    expect(viewPaths(["/w/a/b", "/w/a"])).toEqual(["/w/a"]);
    expect(viewPaths([])).toEqual([]);
    expect(viewPaths(["/w", "/"])).toBeUndefined();
  });

  it("matches a component-wise oracle for any list of paths", () => {
    const part = fc.constantFrom("a", "b", "ab");
    const path = fc.array(part, { minLength: 1, maxLength: 3 }).map((p) => `/${p.join("/")}`);
    fc.assert(
      fc.property(fc.array(path, { maxLength: 6 }), (write) => {
        const within = (p: string, d: string) => {
          const [ps, ds] = [p.split("/"), d.split("/")];
          return ps.length > ds.length && ds.every((c, i) => ps[i] === c);
        };
        const expected = [...new Set(write)].filter((p) => !write.some((d) => within(p, d)));
        expect(viewPaths(write)).toEqual(expected);
      }),
    );
  });

  it.runIf(binding !== null)(
    "the addon carries the list and refuses a view path that is not a write path",
    () => {
      const run = () =>
        rawSandboxSpawn({
          readAll: true,
          read: [],
          write: ["/tmp"],
          exec: [],
          execWritable: false,
          network: false,
          landlock: false,
          seccomp: false,
          dropCapabilities: false,
          readOnlyView: false,
          viewPaths: ["/etc"],
          userNamespace: false,
        });
      expect(run).toThrow(new TypeError("spawn: sandbox.viewPaths must name write paths only"));
    },
  );
});
