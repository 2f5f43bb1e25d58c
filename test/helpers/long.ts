/**
 * Volume knobs: `npm test` runs short counts; `npm run test:long` sets
 * EXACTSPAWN_TEST_LONG=1 and the same tests run their full counts.
 */
export const LONG = process.env["EXACTSPAWN_TEST_LONG"] === "1";

/** `short` under `npm test`, `long` under `npm run test:long`. */
export function byRun<T>(short: T, long: T): T {
  return LONG ? long : short;
}
