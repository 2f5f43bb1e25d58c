/**
 * The most output bytes one captured stream may keep so that the result can
 * still be built: a Buffer holds at most `buffer.constants.MAX_LENGTH` bytes,
 * and a decoded string at most `MAX_STRING_LENGTH` UTF-16 units. A larger
 * `maxBuffer` is clamped to it, so an output that would not fit ends as a
 * `maxBuffer` failure with what fits instead of a result that can never be
 * delivered.
 */
import { constants } from "node:buffer";

/** Bytes that decode to at most MAX_STRING_LENGTH characters in `encoding`. */
function stringBytes(encoding: BufferEncoding): number {
  const chars = constants.MAX_STRING_LENGTH;
  switch (encoding) {
    case "hex":
      return Math.floor(chars / 2);
    case "base64":
    case "base64url":
      return Math.floor(chars / 4) * 3;
    case "utf16le":
    case "utf-16le":
    case "ucs2":
    case "ucs-2":
      return chars * 2;
    default:
      // utf8, latin1/binary, ascii: never more than one character per byte.
      return chars;
  }
}

/** `maxBuffer` clamped to what a Buffer (and, for a string encoding, a string) can hold. */
export function outputLimit(maxBuffer: number, encoding: BufferEncoding | "buffer"): number {
  const limit = Math.min(maxBuffer, constants.MAX_LENGTH);
  return encoding === "buffer" ? limit : Math.min(limit, stringBytes(encoding));
}
