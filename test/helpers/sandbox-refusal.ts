/** Runs `run` and returns the SandboxError it throws; anything else fails the test. */
import { SandboxError } from "../../src/index.js";

export function refusal(run: () => unknown): SandboxError {
  try {
    run();
  } catch (error) {
    if (error instanceof SandboxError) return error;
    throw error;
  }
  throw new Error("expected a SandboxError");
}
