// helper_plan.cc — see helper_plan.h.
#include "helper_plan.h"

#include <linux/filter.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace exactspawn {

namespace {

class Writer {
 public:
  explicit Writer(std::vector<char>* out) : out_(out) { out_->assign(sizeof(PlanHeader), 0); }
  // Appends `size` bytes at an 8-aligned offset; returns the offset.
  uint32_t bytes(const void* data, size_t size) {
    out_->resize((out_->size() + 7) & ~size_t{7}, 0);
    const size_t at = out_->size();
    if (at > UINT32_MAX) overflow_ = true;
    const char* from = static_cast<const char*>(data);
    out_->insert(out_->end(), from, from + size);
    return static_cast<uint32_t>(at);
  }
  uint32_t string(const char* s) { return s == nullptr ? 0 : bytes(s, std::strlen(s) + 1); }
  // A NULL-terminated list's strings back to back; returns the offset of the first.
  uint32_t strings(const char* const* list, uint32_t* count) {
    size_t n = 0;
    while (list[n] != nullptr) ++n;
    return strings(list, n, count);
  }
  // n strings back to back; returns the offset of the first.
  uint32_t strings(const char* const* list, size_t n, uint32_t* count) {
    if (n > UINT32_MAX) overflow_ = true;
    *count = static_cast<uint32_t>(n);
    out_->resize((out_->size() + 7) & ~size_t{7}, 0);
    const uint32_t at = static_cast<uint32_t>(out_->size());
    for (size_t i = 0; i < n; ++i) {
      out_->insert(out_->end(), list[i], list[i] + std::strlen(list[i]) + 1);
    }
    if (n == 0) out_->push_back('\0');  // an offset inside the plan, for no string
    return at;
  }
  bool overflowed() const { return overflow_ || out_->size() > UINT32_MAX; }
  PlanHeader* header() { return reinterpret_cast<PlanHeader*>(out_->data()); }

 private:
  std::vector<char>* out_;
  bool overflow_ = false;
};

// A string at `offset` that ends inside the plan; nullptr if not.
const char* string_at(const char* bytes, size_t size, uint32_t offset) {
  if (offset == 0 || offset >= size) return nullptr;
  return std::memchr(bytes + offset, '\0', size - offset) != nullptr ? bytes + offset : nullptr;
}

// `count` strings back to back from `offset` into a NULL-terminated array.
char** strings_at(char* bytes, size_t size, uint32_t offset, uint32_t count) {
  if (offset == 0 || offset >= size || count > size) return nullptr;
  char** list = static_cast<char**>(std::malloc((size_t{count} + 1) * sizeof(char*)));
  if (list == nullptr) return nullptr;
  size_t at = offset;
  for (uint32_t i = 0; i < count; ++i) {
    if (at >= size) return nullptr;
    const void* end = std::memchr(bytes + at, '\0', size - at);
    if (end == nullptr) return nullptr;
    list[i] = bytes + at;
    at = static_cast<const char*>(end) - bytes + 1;
  }
  list[count] = nullptr;
  return list;
}

// An array of count items of `item` bytes at an 8-aligned offset inside the plan.
const void* array_at(const char* bytes, size_t size, uint32_t offset, uint32_t count, size_t item) {
  if (count == 0) return nullptr;
  if (offset == 0 || offset % 8 != 0 || offset > size || (size - offset) / item < count) {
    return nullptr;
  }
  return bytes + offset;
}

}  // namespace

int encode_plan(const SpawnRequest& request, const ExecControls& controls, pid_t parent,
                PlanMode mode, std::vector<char>* out) {
  Writer w(out);
  PlanHeader h = {};
  h.magic = kPlanMagic;
  h.version = kPlanVersion;
  h.flags = 0;
  h.mode = static_cast<uint32_t>(mode);
  h.parent = parent;
  h.file = w.string(request.file);
  h.cwd = w.string(request.cwd);
  h.argv = request.argv != nullptr ? w.strings(request.argv, &h.argc) : 0;
  h.envp = request.envp != nullptr ? w.strings(request.envp, &h.envc) : 0;
  h.new_session = request.new_session;
  h.new_process_group = request.new_process_group;
  const ExecControls& c = controls;
  h.set_uid = c.set_uid;
  h.uid = c.uid;
  h.set_gid = c.set_gid;
  h.gid = c.gid;
  h.set_groups = c.set_groups;
  if (c.group_count > UINT32_MAX || c.limit_count > UINT32_MAX) return -EINVAL;
  h.group_count = static_cast<uint32_t>(c.group_count);
  if (c.group_count > 0) h.groups = w.bytes(c.groups, c.group_count * sizeof(gid_t));
  h.umask = c.umask;
  h.limit_count = static_cast<uint32_t>(c.limit_count);
  if (c.limit_count > 0) h.limits = w.bytes(c.limits, c.limit_count * sizeof(ResourceLimit));
  h.set_nice = c.set_nice;
  h.nice = c.nice;
  h.no_new_privs = c.no_new_privs;
  h.parent_death_signal = c.parent_death_signal;
  h.pid_namespace = static_cast<uint32_t>(c.pid_namespace);
  if (c.pid_namespace == PidNamespace::kPidAndUser) {
    char map[32];
    id_map(geteuid(), map);
    h.namespace_uid_map = w.string(map);
    id_map(getegid(), map);
    h.namespace_gid_map = w.string(map);
  }
  if (const SandboxPlan* s = c.sandbox; s != nullptr) {
    h.sandboxed = 1;
    h.drop_capabilities = s->drop_capabilities;
    if (s->filter != nullptr) {
      h.filter_length = s->filter->len;
      h.filter = w.bytes(s->filter->filter, s->filter->len * sizeof(struct sock_filter));
    }
    if (const MountView* v = s->mount_view; v != nullptr) {
      h.view = 1;
      h.view_user_namespace = v->user_namespace;
      h.writable = w.strings(v->writable, v->writable_count, &h.writable_count);
      h.uid_map = w.string(v->uid_map);
      h.gid_map = w.string(v->gid_map);
      h.view_cwd = w.string(v->cwd);
    }
    if (const LandlockRules* l = s->landlock; l != nullptr) {
      h.landlock = 1;
      h.read_all = l->read_all;
      h.exec_writable = l->exec_writable;
      h.network = l->network;
      h.read = w.strings(l->read, l->read_count, &h.read_count);
      h.write = w.strings(l->write, l->write_count, &h.write_count);
      h.exec = w.strings(l->exec, l->exec_count, &h.exec_count);
    }
  }
  w.bytes("", 0);  // pads the size to 8
  if (w.overflowed()) return -EINVAL;
  h.size = static_cast<uint32_t>(out->size());
  std::memcpy(w.header(), &h, sizeof h);
  return 0;
}

int decode_plan(char* bytes, size_t size, DecodedPlan* plan) {
  PlanHeader h;
  if (size < sizeof h) return -EINVAL;
  std::memcpy(&h, bytes, sizeof h);
  if (h.magic != kPlanMagic || h.version != kPlanVersion || (h.flags & ~kPlanKnownFlags) != 0 ||
      h.size != size || h.mode > static_cast<uint32_t>(PlanMode::kProbePidNamespace) ||
      h.pid_namespace > static_cast<uint32_t>(PidNamespace::kPidAndUser)) {
    return -EINVAL;
  }
  plan->mode = static_cast<PlanMode>(h.mode);
  plan->parent = h.parent;
  plan->controls.pid_namespace = static_cast<PidNamespace>(h.pid_namespace);
  if (plan->controls.pid_namespace == PidNamespace::kPidAndUser) {
    plan->namespace_uid_map = string_at(bytes, size, h.namespace_uid_map);
    plan->namespace_gid_map = string_at(bytes, size, h.namespace_gid_map);
    if (plan->namespace_uid_map == nullptr || plan->namespace_gid_map == nullptr) return -EINVAL;
  }
  if (plan->mode != PlanMode::kRun) return 0;
  SpawnRequest& r = plan->request;
  r.file = string_at(bytes, size, h.file);
  r.cwd = h.cwd == 0 ? nullptr : string_at(bytes, size, h.cwd);
  r.argv = strings_at(bytes, size, h.argv, h.argc);
  r.envp = strings_at(bytes, size, h.envp, h.envc);
  if (r.file == nullptr || (h.cwd != 0 && r.cwd == nullptr) || r.argv == nullptr ||
      r.envp == nullptr) {
    return -EINVAL;
  }
  r.new_session = h.new_session != 0;
  r.new_process_group = h.new_process_group != 0;
  ExecControls& c = plan->controls;
  c.set_uid = h.set_uid != 0;
  c.uid = h.uid;
  c.set_gid = h.set_gid != 0;
  c.gid = h.gid;
  c.set_groups = h.set_groups != 0;
  c.group_count = h.group_count;
  c.groups =
      static_cast<const gid_t*>(array_at(bytes, size, h.groups, h.group_count, sizeof(gid_t)));
  c.umask = h.umask;
  c.limit_count = h.limit_count;
  c.limits = static_cast<const ResourceLimit*>(
      array_at(bytes, size, h.limits, h.limit_count, sizeof(ResourceLimit)));
  c.set_nice = h.set_nice != 0;
  c.nice = h.nice;
  c.no_new_privs = h.no_new_privs != 0;
  c.parent_death_signal = h.parent_death_signal;
  if ((c.group_count > 0 && c.groups == nullptr) || (c.limit_count > 0 && c.limits == nullptr)) {
    return -EINVAL;
  }
  if (h.sandboxed == 0) return 0;
  SandboxPlan& s = plan->sandbox;
  s.drop_capabilities = h.drop_capabilities != 0;
  if (h.filter_length > 0) {
    if (h.filter_length > USHRT_MAX) return -EINVAL;
    plan->filter.len = static_cast<unsigned short>(h.filter_length);
    plan->filter.filter = static_cast<struct sock_filter*>(const_cast<void*>(
        array_at(bytes, size, h.filter, h.filter_length, sizeof(struct sock_filter))));
    if (plan->filter.filter == nullptr) return -EINVAL;
    s.filter = &plan->filter;
  }
  if (h.view != 0) {
    MountView& v = plan->view;
    v.writable_count = h.writable_count;
    char** writable = strings_at(bytes, size, h.writable, h.writable_count);
    int* fds = static_cast<int*>(std::malloc((2 * size_t{h.writable_count} + 1) * sizeof(int)));
    if (writable == nullptr || fds == nullptr) return -EINVAL;
    v.writable = writable;
    v.fds = fds;
    v.user_namespace = h.view_user_namespace != 0;
    v.uid_map = string_at(bytes, size, h.uid_map);
    v.gid_map = string_at(bytes, size, h.gid_map);
    v.cwd = h.view_cwd == 0 ? nullptr : string_at(bytes, size, h.view_cwd);
    if (v.user_namespace && (v.uid_map == nullptr || v.gid_map == nullptr)) return -EINVAL;
    s.mount_view = &v;
  }
  if (h.landlock != 0) {
    LandlockRules& l = plan->landlock;
    l.read_all = h.read_all != 0;
    l.exec_writable = h.exec_writable != 0;
    l.network = h.network != 0;
    l.read = strings_at(bytes, size, h.read, h.read_count);
    l.read_count = h.read_count;
    l.write = strings_at(bytes, size, h.write, h.write_count);
    l.write_count = h.write_count;
    l.exec = strings_at(bytes, size, h.exec, h.exec_count);
    l.exec_count = h.exec_count;
    if (l.read == nullptr || l.write == nullptr || l.exec == nullptr) return -EINVAL;
    s.landlock = &l;
  }
  c.sandbox = &s;
  return 0;
}

}  // namespace exactspawn
