/**
 * Who waits for the children's exits and captured output in the addon: the
 * host's own event loop, or a thread of the addon's own that hands each batch
 * over through Node-API. The loop costs no thread switch per exit, but only
 * Node has one the addon may use (libuv); Bun and Deno implement Node-API
 * without libuv, so there the thread waits. `EXACTSPAWN_EXIT_WATCH=thread`
 * chooses the thread under Node too.
 */
export type ExitWatch = "host-loop" | "thread";

/** What the running runtime is, as far as the choice goes. */
export interface RuntimeFacts {
  readonly bun: boolean;
  readonly deno: boolean;
  /** The value of EXACTSPAWN_EXIT_WATCH, if set. */
  readonly setting: string | undefined;
}

export function currentRuntime(): RuntimeFacts {
  return {
    bun: process.versions["bun"] !== undefined,
    deno: "Deno" in globalThis,
    setting: process.env["EXACTSPAWN_EXIT_WATCH"],
  };
}

/** Whether to ask the addon for the host's loop. */
export function wantsHostLoop(facts: RuntimeFacts): boolean {
  if (facts.bun || facts.deno) return false;
  return (facts.setting ?? "").trim().toLowerCase() !== "thread";
}
