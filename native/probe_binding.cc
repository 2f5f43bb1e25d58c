// probe_binding.cc — marshalling only: converts a ProbeResult into
// { argMax, stackSoft, stackHard, pageSize }, each field
// { value: number | null, unlimited: boolean, error: string | null }.
// `error` is the errno's symbolic name (e.g. "EINVAL").
// Also kernelSupport(): see core/kernel_support.h.
#include "probe_binding.h"

#include "core/errno_names.h"
#include "core/kernel_support.h"
#include "core/probe.h"
#include "system_error.h"

namespace exactspawn {

namespace {

Napi::Object ToJs(Napi::Env env, const ProbedValue& field) {
  Napi::Object out = Napi::Object::New(env);
  bool has_value = field.error == 0 && !field.unlimited;
  out.Set("value", has_value ? Napi::Value(Napi::Number::New(env, static_cast<double>(field.value)))
                             : env.Null());
  out.Set("unlimited", Napi::Boolean::New(env, field.unlimited));
  out.Set("error", field.error == 0 ? env.Null()
                                    : Napi::Value(Napi::String::New(env, errno_code(field.error))));
  return out;
}

Napi::Value ProbeChecked(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ProbeResult result = probe_limits();
  Napi::Object out = Napi::Object::New(env);
  out.Set("argMax", ToJs(env, result.arg_max));
  out.Set("stackSoft", ToJs(env, result.stack_soft));
  out.Set("stackHard", ToJs(env, result.stack_hard));
  out.Set("pageSize", ToJs(env, result.page_size));
  return out;
}

Napi::Value MissingOrNull(Napi::Env env, int error) {
  return error == 0 ? env.Null() : Napi::Value(Napi::String::New(env, errno_code(error)));
}

Napi::Value KernelSupportChecked(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  KernelSupport support = probe_kernel_support();
  Napi::Object out = Napi::Object::New(env);
  out.Set("pidfdOpen", MissingOrNull(env, support.pidfd_open_error));
  out.Set("closeRange", MissingOrNull(env, support.close_range_error));
  return out;
}

}  // namespace

Napi::Value KernelSupportOf(const Napi::CallbackInfo& info) {
  return Marshal(info, [&] { return KernelSupportChecked(info); });
}

Napi::Value Probe(const Napi::CallbackInfo& info) {
  return Marshal(info, [&] { return ProbeChecked(info); });
}

}  // namespace exactspawn
