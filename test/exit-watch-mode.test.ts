import { describe, expect, it } from "vitest";
import { currentRuntime, wantsHostLoop } from "../src/exit-watch-mode.js";

describe("who waits for exits", () => {
  it("is the host's loop under Node unless EXACTSPAWN_EXIT_WATCH=thread", () => {
    expect(wantsHostLoop({ bun: false, deno: false, setting: undefined })).toBe(true);
    expect(wantsHostLoop({ bun: false, deno: false, setting: "" })).toBe(true);
    expect(wantsHostLoop({ bun: false, deno: false, setting: " Thread " })).toBe(false);
  });

  it("is the addon's thread under Bun and Deno, whatever the setting", () => {
    expect(wantsHostLoop({ bun: true, deno: false, setting: undefined })).toBe(false);
    expect(wantsHostLoop({ bun: false, deno: true, setting: "host-loop" })).toBe(false);
  });

  it("knows this runtime", () => {
    const facts = currentRuntime();
    expect(facts.bun).toBe(false);
    expect(facts.deno).toBe(false);
    expect(facts.setting).toBe(process.env["EXACTSPAWN_EXIT_WATCH"]);
  });
});
