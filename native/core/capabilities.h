// capabilities.h — the raw capget(2)/capset(2) ABI (no libcap): the header
// and the per-word sets of _LINUX_CAPABILITY_VERSION_3, whose two words cover
// capabilities 0-63. Declarations only: each caller makes the raw call itself,
// so code between clone and exec stays a plain system call.
#ifndef EXACTSPAWN_CORE_CAPABILITIES_H_
#define EXACTSPAWN_CORE_CAPABILITIES_H_

#include <cstdint>

namespace exactspawn {

struct CapHeader {
  uint32_t version;
  int pid;  // 0: the calling thread
};

// One 32-bit word of each set; capget/capset take two (CapData[2]).
struct CapData {
  uint32_t effective;
  uint32_t permitted;
  uint32_t inheritable;
};

constexpr uint32_t kCapabilityVersion3 = 0x20080522;  // _LINUX_CAPABILITY_VERSION_3
constexpr int kCapSetpcap = 8;                        // CAP_SETPCAP
constexpr int kCapSysAdmin = 21;                      // CAP_SYS_ADMIN

}  // namespace exactspawn

#endif  // EXACTSPAWN_CORE_CAPABILITIES_H_
