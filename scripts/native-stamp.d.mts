/** Content hash of the C++ sources under native/ and binding.gyp, as compiled into the addon. */
export function nativeSourceStamp(): string;
