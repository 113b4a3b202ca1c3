// XSC_OPTIONS parsing, in the spirit of TSAN_OPTIONS: "name=value" items
// separated by ':', ' ' or ','. A value may be quoted ('...' or "...") when it
// holds a separator, e.g. a path with a space.
#include "checker/options.h"

#include <charconv>
#include <cstdlib>
#include <string>

namespace xsc {
namespace {

bool is_separator(char c) { return c == ':' || c == ' ' || c == ',' || c == '\t' || c == '\n'; }

bool parse_bool(std::string_view v, bool* out) {
  if (v == "1" || v == "true" || v == "yes") {
    *out = true;
    return true;
  }
  if (v == "0" || v == "false" || v == "no") {
    *out = false;
    return true;
  }
  return false;
}

bool parse_int(std::string_view v, int lo, int hi, int* out) {
  int value = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), value);
  if (ec != std::errc() || end != v.data() + v.size() || value < lo || value > hi) return false;
  *out = value;
  return true;
}

// Applies one name=value pair; false with *error set on a bad name or value.
bool apply_one(std::string_view name, std::string_view value, Options* o, std::string* error) {
  auto bad_value = [&](std::string_view expected) {
    *error = "bad value '" + std::string(value) + "' for option '" + std::string(name) +
             "' (expected " + std::string(expected) + ")";
    return false;
  };
  if (name == "report") {
    if (!parse_report_format(value, &o->report)) return bad_value("text, json or sarif");
  } else if (name == "suppressions") {
    o->suppressions = value;
  } else if (name == "log_path") {
    o->log_path = value;
  } else if (name == "record") {
    o->record = value;
  } else if (name == "timeline") {
    o->timeline = value;
  } else if (name == "exitcode") {
    if (!parse_int(value, 0, 255, &o->exitcode)) return bad_value("an integer in 0..255");
  } else if (name == "advisory") {
    if (!parse_bool(value, &o->advisory)) return bad_value("0 or 1");
  } else if (name == "stack_depth") {
    if (!parse_int(value, 0, 256, &o->stack_depth)) return bad_value("an integer in 0..256");
  } else if (name == "verbosity") {
    if (!parse_int(value, 0, 100, &o->verbosity)) return bad_value("an integer in 0..100");
  } else if (name == "use_after_free") {
    if (!parse_bool(value, &o->use_after_free)) return bad_value("0 or 1");
  } else if (name == "use_before_ready") {
    if (!parse_bool(value, &o->use_before_ready)) return bad_value("0 or 1");
  } else if (name == "reuse_race") {
    if (!parse_bool(value, &o->reuse_race)) return bad_value("0 or 1");
  } else if (name == "write_after_read") {
    if (!parse_bool(value, &o->write_after_read)) return bad_value("0 or 1");
  } else if (name == "first_use_writes") {
    if (!parse_bool(value, &o->first_use_writes)) return bad_value("0 or 1");
  } else if (name == "strict") {
    if (!parse_bool(value, &o->strict)) return bad_value("0 or 1");
  } else if (name == "torch_op_access") {
    if (!parse_bool(value, &o->torch_op_access)) return bad_value("0 or 1");
  } else if (name == "cublas_access") {
    if (!parse_bool(value, &o->cublas_access)) return bad_value("0 or 1");
  } else if (name == "builtin_suppressions") {
    if (!parse_bool(value, &o->builtin_suppressions)) return bad_value("0 or 1");
  } else if (name == "cudnn_access") {
    if (!parse_bool(value, &o->cudnn_access)) return bad_value("0 or 1");
  } else if (name == "host_guard") {
    if (!parse_bool(value, &o->host_guard)) return bad_value("0 or 1");
  } else if (name == "checker_thread") {
    if (!parse_bool(value, &o->checker_thread)) return bad_value("0 or 1");
  } else if (name == "host_sync") {
    if (!parse_bool(value, &o->host_sync)) return bad_value("0 or 1");
  } else if (name == "param_fills") {
    if (!parse_bool(value, &o->param_fills)) return bad_value("0 or 1");
  } else if (name == "launch_callbacks") {
    if (value == "auto") o->launch_callbacks = LaunchCallbacks::kAuto;
    else if (value == "runtime") o->launch_callbacks = LaunchCallbacks::kRuntime;
    else if (value == "driver") o->launch_callbacks = LaunchCallbacks::kDriver;
    else return bad_value("auto, runtime or driver");
  } else if (name == "call_callbacks") {
    if (value == "auto") o->call_callbacks = CallCallbacks::kAuto;
    else if (value == "runtime") o->call_callbacks = CallCallbacks::kRuntime;
    else return bad_value("auto or runtime");
  } else {
    *error = "unknown option '" + std::string(name) + "'";
    return false;
  }
  return true;
}

}  // namespace

bool parse_report_format(std::string_view text, ReportFormat* out) {
  if (text == "text") *out = ReportFormat::kText;
  else if (text == "json") *out = ReportFormat::kJson;
  else if (text == "sarif") *out = ReportFormat::kSarif;
  else return false;
  return true;
}

bool parse_options(std::string_view text, Options* options, std::string* error) {
  // Work on a copy so a bad item leaves *options untouched.
  Options result = *options;
  std::size_t i = 0;
  while (i < text.size()) {
    if (is_separator(text[i])) {
      ++i;
      continue;
    }
    std::size_t name_begin = i;
    while (i < text.size() && text[i] != '=' && !is_separator(text[i])) ++i;
    std::string_view name = text.substr(name_begin, i - name_begin);
    if (i >= text.size() || text[i] != '=') {
      *error = "option '" + std::string(name) + "' has no value (expected name=value)";
      return false;
    }
    ++i;  // '='
    std::string value;
    if (i < text.size() && (text[i] == '\'' || text[i] == '"')) {
      char quote = text[i++];
      std::size_t close = text.find(quote, i);
      if (close == std::string_view::npos) {
        *error = "unterminated quote in the value of option '" + std::string(name) + "'";
        return false;
      }
      value = text.substr(i, close - i);
      i = close + 1;
      if (i < text.size() && !is_separator(text[i])) {
        *error = "unexpected text after the quoted value of option '" + std::string(name) + "'";
        return false;
      }
    } else {
      std::size_t value_begin = i;
      while (i < text.size() && !is_separator(text[i])) ++i;
      value = text.substr(value_begin, i - value_begin);
    }
    if (!apply_one(name, value, &result, error)) return false;
  }
  *options = std::move(result);
  return true;
}

bool apply_env_options(Options* options, std::string* error) {
  const char* env = std::getenv("XSC_OPTIONS");
  if (env == nullptr) return true;
  if (!parse_options(env, options, error)) {
    *error = "XSC_OPTIONS: " + *error;
    return false;
  }
  return true;
}

}  // namespace xsc
