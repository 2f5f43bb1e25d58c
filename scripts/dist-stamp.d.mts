/** Where `npm run compile` records the stamp dist/ was compiled from. */
export const DIST_STAMP_FILE: string;
/** Content hash of src/ and the tsconfigs, the inputs of dist/. */
export function distSourceStamp(): string;
/** The stamp recorded in dist/, or undefined when dist/ was never compiled by `npm run compile`. */
export function recordedDistStamp(): string | undefined;
