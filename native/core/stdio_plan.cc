// stdio_plan.cc — see stdio_plan.h.
#include "stdio_plan.h"

#include <algorithm>
#include <cerrno>
#include <climits>

namespace exactspawn {

int plan_stdio(const int* stdio, size_t count, std::vector<StdioStep>* steps) {
  steps->clear();
  if (count > static_cast<size_t>(INT_MAX)) return -EBADF;
  // 64-bit: a source of INT_MAX must not overflow the "above everything" number.
  long long high = static_cast<long long>(count);
  for (size_t i = 0; i < count; ++i) {
    if (stdio[i] >= high) high = static_cast<long long>(stdio[i]) + 1;
  }
  steps->reserve(2 * count + 1);
  std::vector<int> sources(stdio, stdio + count);
  for (size_t i = 0; i < count; ++i) {
    int source = sources[i];
    if (source >= 0 && source < static_cast<int>(count) && source != static_cast<int>(i)) {
      if (high > INT_MAX) return -EBADF;  // no fd number is left to park it on
      steps->push_back({StdioOp::kDup, source, static_cast<int>(high)});
      sources[i] = static_cast<int>(high++);
    }
  }
  for (size_t i = 0; i < count; ++i) {
    const int slot = static_cast<int>(i);
    const int source = sources[i];
    if (source < 0) {
      steps->push_back({StdioOp::kOpenNull, -1, slot});
    } else if (source == slot) {
      steps->push_back({StdioOp::kKeep, -1, slot});
    } else {
      steps->push_back({StdioOp::kDup, source, slot});
    }
  }
  steps->push_back({StdioOp::kCloseFrom, -1, static_cast<int>(count)});
  return 0;
}

int stdio_ceiling(const std::vector<StdioStep>& steps) {
  int top = 0;
  for (const StdioStep& step : steps) top = std::max(top, std::max(step.from, step.to));
  return top == INT_MAX ? INT_MAX : top + 1;
}

}  // namespace exactspawn
