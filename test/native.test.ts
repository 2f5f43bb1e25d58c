/**
 * The loader: the addon in use was built from the sources in native/, the
 * committed prebuild too, and every way of not loading is explicit.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { nativeSourceStamp } from "../scripts/native-stamp.mjs";
import { nativeBinding, nativeStatus, PACKAGE_ROOT } from "../src/native.js";

const runNode = (code: string, env: NodeJS.ProcessEnv, cwd = PACKAGE_ROOT) =>
  spawnSync(process.execPath, ["--input-type=module", "-e", code], {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      EXACTSPAWN_NATIVE: "",
      PREBUILDS_ONLY: "",
      EXACTSPAWN_PREBUILD: undefined,
      ...env,
    },
  });

const REPORT = `
import { nativeStatus, probeLimits } from "./dist/index.js";
import { nativeBinding } from "./dist/native.js";
import { locateAddon } from "./dist/native-locate.js";
const status = nativeStatus();
console.log(JSON.stringify({ status, limits: probeLimits(), stamp: nativeBinding()?.sourceStamp,
  path: locateAddon(process.cwd()).path }));
`;

describe.runIf(process.env["EXACTSPAWN_NATIVE"] !== "0")("the addon in use", () => {
  it("loads and was built from the sources in native/", () => {
    expect(nativeStatus()).toMatchObject({ loaded: true, reason: undefined });
    expect(nativeBinding()?.sourceStamp).toBe(nativeSourceStamp());
  });

  it("reports a N-API version", () => {
    expect(nativeBinding()?.napiVersion).toBeGreaterThanOrEqual(8);
  });
});

describe("the committed prebuild", () => {
  it("loads with PREBUILDS_ONLY=1 and matches the sources in native/", () => {
    const run = runNode(REPORT, { PREBUILDS_ONLY: "1" });
    expect(run.stderr).toBe("");
    const report = JSON.parse(run.stdout);
    expect(report.status.loaded).toBe(true);
    expect(report.limits.source).toBe("native");
    expect(report.stamp).toBe(nativeSourceStamp());
    expect(report.path).toMatch(
      new RegExp(`/prebuilds/linux-${process.arch}/exactspawn(\\.glibc|\\.musl)?\\.node$`),
    );
  });
});

describe("forcing the addon off", () => {
  it.each(["0", "off", "false"])("EXACTSPAWN_NATIVE=%s gives the fallback floor", (value) => {
    const run = runNode(
      `import { nativeStatus, probeLimits, envByteBudget } from "./dist/index.js";
       console.log(JSON.stringify({ status: nativeStatus(), limits: probeLimits(), budget: envByteBudget() }));`,
      { EXACTSPAWN_NATIVE: value },
    );
    const report = JSON.parse(run.stdout);
    expect(report.status).toMatchObject({ loaded: false, reason: "disabled by EXACTSPAWN_NATIVE" });
    expect(report.limits).toMatchObject({ source: "fallback", execLimit: 262144 });
    expect(report.budget).toBe(262144);
  });
});

describe("a package without any build", () => {
  const dir = mkdtempSync(join(tmpdir(), "exactspawn-nobuild-"));
  cpSync(join(PACKAGE_ROOT, "dist"), join(dir, "dist"), { recursive: true });
  cpSync(join(PACKAGE_ROOT, "package.json"), join(dir, "package.json"));
  symlinkSync(join(PACKAGE_ROOT, "node_modules"), join(dir, "node_modules"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("falls back, warns once and says why, with the platform tuple", () => {
    const run = runNode(
      `import { nativeStatus, probeLimits } from "./dist/index.js";
       probeLimits(); probeLimits({ refresh: true });
       console.log(JSON.stringify({ status: nativeStatus(), limits: probeLimits() }));`,
      { EXACTSPAWN_LOG_LEVEL: "warn" },
      dir,
    );
    const report = JSON.parse(run.stdout);
    expect(report.status.loaded).toBe(false);
    expect(report.status.reason).toContain(
      `could not load the native addon on linux-${process.arch} `,
    );
    expect(report.status.reason).toContain(` node-${process.versions.node} `);
    expect(report.status.reason).toMatch(/No native build was found/);
    expect(report.limits.source).toBe("fallback");
    const warnings = run.stderr
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 50, msg: expect.stringMatching(/fallback/) });
    // What builds the addon, for a user whose npm did not run the install script.
    expect(warnings[0].remedy).toMatch(
      /`npm rebuild exactspawn`.*`npm install-scripts approve exactspawn`/,
    );
  });

  it("warns on stderr at the default level, and only through the host's logger once one is set", () => {
    const bare = runNode(
      `import { probeLimits } from "./dist/index.js"; probeLimits();`,
      { EXACTSPAWN_LOG_LEVEL: undefined },
      dir,
    );
    expect(bare.stderr.trim().split("\n")).toEqual([expect.stringMatching(/"level":50.*fallback/)]);
    const hosted = runNode(
      `import pino from "pino"; import { probeLimits, setLogger } from "./dist/index.js";
       const lines = []; setLogger(pino({ level: "warn" }, { write: (l) => lines.push(l) }));
       probeLimits(); console.log(JSON.stringify(lines.map((l) => JSON.parse(l).msg)));`,
      { EXACTSPAWN_LOG_LEVEL: undefined },
      dir,
    );
    expect(hosted.stderr).toBe("");
    expect(JSON.parse(hosted.stdout)).toEqual([expect.stringMatching(/fallback/)]);
  });

  it("throws with EXACTSPAWN_NATIVE=required", () => {
    const run = runNode(
      `import { probeLimits } from "./dist/index.js"; probeLimits();`,
      {
        EXACTSPAWN_NATIVE: "required",
      },
      dir,
    );
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/could not load the native addon/);
  });
});

describe.runIf(process.env["EXACTSPAWN_EXPECT_ASAN"] === "1")("under npm run test:asan", () => {
  it("runs the sanitizer build of the addon", () => {
    nativeBinding();
    const report = process.report.getReport() as unknown as { sharedObjects: string[] };
    expect(
      report.sharedObjects.some((so) => so.endsWith(".asan/build/Release/exactspawn.node")),
    ).toBe(true);
    expect(report.sharedObjects.some((so) => so.includes("libasan"))).toBe(true);
  });
});
