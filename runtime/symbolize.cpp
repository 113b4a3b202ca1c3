// Symbolization for reports: function, file and line through elfutils'
// libdwfl, demangled. libdw is loaded with dlopen when the first report is
// printed; without it (GPU machines often lack it) dladdr still names the
// function and module.
#include <cxxabi.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#if __has_include(<elfutils/libdwfl.h>)
#include <elfutils/libdwfl.h>
#define XSC_HAVE_LIBDWFL_H 1
#endif

#include "runtime/rtl.h"

namespace xsc::rt {
namespace {

std::string demangle(const char* name) {
  if (name == nullptr) return {};
  int status = 0;
  char* readable = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || readable == nullptr) return name;
  std::string out(readable);
  std::free(readable);
  return out;
}

#ifdef XSC_HAVE_LIBDWFL_H
// libdwfl entry points, resolved from libdw.so.1.
struct Dwfl_Api {
  decltype(&dwfl_begin) begin = nullptr;
  decltype(&dwfl_end) end = nullptr;
  decltype(&dwfl_report_begin) report_begin = nullptr;
  decltype(&dwfl_linux_proc_report) proc_report = nullptr;
  decltype(&dwfl_report_end) report_end = nullptr;
  decltype(&dwfl_addrmodule) addrmodule = nullptr;
  decltype(&dwfl_module_addrname) addrname = nullptr;
  decltype(&dwfl_module_getsrc) getsrc = nullptr;
  decltype(&dwfl_lineinfo) lineinfo = nullptr;
  decltype(&dwfl_module_info) module_info = nullptr;
  decltype(&dwfl_linux_proc_find_elf) find_elf = nullptr;
  decltype(&dwfl_standard_find_debuginfo) find_debuginfo = nullptr;

  bool load() {
    void* lib = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return false;
    auto get = [lib](auto* slot, const char* name) {
      *slot = reinterpret_cast<std::remove_reference_t<decltype(*slot)>>(dlsym(lib, name));
      return *slot != nullptr;
    };
    return get(&begin, "dwfl_begin") && get(&end, "dwfl_end") &&
           get(&report_begin, "dwfl_report_begin") &&
           get(&proc_report, "dwfl_linux_proc_report") && get(&report_end, "dwfl_report_end") &&
           get(&addrmodule, "dwfl_addrmodule") && get(&addrname, "dwfl_module_addrname") &&
           get(&getsrc, "dwfl_module_getsrc") && get(&lineinfo, "dwfl_lineinfo") &&
           get(&module_info, "dwfl_module_info") &&
           get(&find_elf, "dwfl_linux_proc_find_elf") &&
           get(&find_debuginfo, "dwfl_standard_find_debuginfo");
  }
};
#endif

class ProcessSymbolizer final : public Symbolizer {
 public:
  Frame symbolize(std::uint64_t pc) override {
    std::lock_guard<std::mutex> lock(mu_);
    Frame frame;
    frame.pc = pc;
#ifdef XSC_HAVE_LIBDWFL_H
    if (Dwfl* dwfl = session_dwfl()) {
      if (Dwfl_Module* module = api_.addrmodule(dwfl, pc)) {
        const char* module_name =
            api_.module_info(module, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
        if (module_name != nullptr) frame.module = module_name;
        frame.function = demangle(api_.addrname(module, pc));
        if (Dwfl_Line* line = api_.getsrc(module, pc)) {
          int lineno = 0;
          const char* file = api_.lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr);
          if (file != nullptr) frame.file = file;
          frame.line = lineno > 0 ? static_cast<std::uint32_t>(lineno) : 0;
        }
      }
    }
#endif
    if (frame.function.empty() || frame.module.empty()) {
      Dl_info info;
      if (dladdr(reinterpret_cast<void*>(pc), &info) != 0) {
        if (frame.function.empty()) frame.function = demangle(info.dli_sname);
        if (frame.module.empty() && info.dli_fname != nullptr) frame.module = info.dli_fname;
      }
    }
    return frame;
  }

 private:
#ifdef XSC_HAVE_LIBDWFL_H
  Dwfl* session_dwfl() {
    if (tried_) return dwfl_;
    tried_ = true;
    if (!api_.load()) return nullptr;
    callbacks_.find_elf = api_.find_elf;
    callbacks_.find_debuginfo = api_.find_debuginfo;
    callbacks_.section_address = nullptr;
    callbacks_.debuginfo_path = nullptr;
    Dwfl* dwfl = api_.begin(&callbacks_);
    if (dwfl == nullptr) return nullptr;
    api_.report_begin(dwfl);
    if (api_.proc_report(dwfl, getpid()) != 0 || api_.report_end(dwfl, nullptr, nullptr) != 0) {
      api_.end(dwfl);
      return nullptr;
    }
    dwfl_ = dwfl;  // kept for the life of the process
    return dwfl_;
  }

  Dwfl_Api api_;
  Dwfl_Callbacks callbacks_{};
  Dwfl* dwfl_ = nullptr;
  bool tried_ = false;
#endif
  std::mutex mu_;
};

}  // namespace

void install_symbolizer(Session& session) {
  session.stacks().set_symbolizer(std::make_shared<ProcessSymbolizer>());
}

}  // namespace xsc::rt
