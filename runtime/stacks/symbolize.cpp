// Symbolization for reports, when the first report needs it.
//
// In order of preference, per frame:
//   1. elfutils' libdwfl: function, file and line (DWARF);
//   2. the module's ELF symbol table through libelf: the function only (a
//      module libdw cannot read, or a machine without libdw);
//   3. dladdr: exported functions only.
// Calls the compiler inlined at a pc become frames of their own, innermost
// first, as DWARF's inlined-subroutine scopes describe them: a cudaMalloc<T>
// template from cuda_runtime.h inlined into main is told as that frame, then
// main at the user's line (libdw's dwarf_getscopes; without those entry
// points, one frame per pc).
// A frame always carries its module and, in Frame::pc, the offset of the pc
// in that module (pc minus the module's load bias: what addr2line and
// `nm` speak), so that even an unnamed frame can be looked up by hand.
//
// elfutils is loaded with dlopen, never linked. The copies placed next to
// this library at build time (lib/xstream_check/libelf.so.1, libdw.so.1)
// come first, libelf before libdw so that the pair from one elfutils
// release is used together: GPU machines often have a libelf but no libdw,
// and a libdw must not be bound to another release's libelf.
// XSC_LIBDW=<path> names the one libdw to try (a path that does not exist
// leaves the symbol tables alone to work, which is how that is tested).
#include <cxxabi.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#ifdef XSC_HAVE_ELFUTILS
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>
#endif

#include "runtime/rtl.h"
#include "runtime/timing.h"

namespace xsc::rt {
namespace {

std::string own_directory() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&own_directory), &info) == 0 || info.dli_fname == nullptr)
    return ".";
  std::string path = info.dli_fname;
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::string executable_path() {
  char buffer[4096];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) return {};
  buffer[n] = '\0';
  return buffer;
}

// The module holding `pc` and its load bias, from the dynamic linker.
struct ModuleOf {
  std::string path;
  std::uint64_t bias = 0;
  bool found = false;
};

ModuleOf module_of(std::uint64_t pc) {
  ModuleOf out;
  Dl_info info;
  link_map* map = nullptr;
  if (dladdr1(reinterpret_cast<void*>(pc), &info, reinterpret_cast<void**>(&map),
              RTLD_DL_LINKMAP) == 0 ||
      map == nullptr)
    return out;
  out.found = true;
  out.bias = map->l_addr;
  // The main program's link map has an empty name; dladdr's is argv[0].
  if (map->l_name != nullptr && map->l_name[0] != '\0') out.path = map->l_name;
  else out.path = executable_path();
  if (out.path.empty() && info.dli_fname != nullptr) out.path = info.dli_fname;
  return out;
}

// Loads count reported by dl_iterate_phdr: changes when libraries come or go.
int count_loads(struct dl_phdr_info* info, size_t, void* arg) {
  *static_cast<unsigned long long*>(arg) = info->dlpi_adds;
  return 1;
}

unsigned long long loads_now() {
  unsigned long long loads = 0;
  dl_iterate_phdr(count_loads, &loads);
  return loads;
}

// A call the compiler inlined: the function called, and where the call is.
struct InlinedCall {
  std::string function;
  std::string call_file;
  std::uint32_t call_line = 0;
};

#ifdef XSC_HAVE_ELFUTILS

template <class Slot>
bool bind(void* library, Slot* slot, const char* name) {
  *slot = reinterpret_cast<Slot>(dlsym(library, name));
  return *slot != nullptr;
}

// libelf entry points, for symbol tables.
struct ElfApi {
  decltype(&elf_version) version = nullptr;
  decltype(&elf_begin) begin = nullptr;
  decltype(&elf_end) end = nullptr;
  decltype(&elf_nextscn) nextscn = nullptr;
  decltype(&gelf_getshdr) getshdr = nullptr;
  decltype(&elf_getdata) getdata = nullptr;
  decltype(&gelf_getsym) getsym = nullptr;
  decltype(&elf_strptr) strptr = nullptr;
  decltype(&elf_errmsg) errmsg = nullptr;

  bool load(void* library) {
    return bind(library, &version, "elf_version") && bind(library, &begin, "elf_begin") &&
           bind(library, &end, "elf_end") && bind(library, &nextscn, "elf_nextscn") &&
           bind(library, &getshdr, "gelf_getshdr") && bind(library, &getdata, "elf_getdata") &&
           bind(library, &getsym, "gelf_getsym") && bind(library, &strptr, "elf_strptr") &&
           bind(library, &errmsg, "elf_errmsg") && version(EV_CURRENT) != EV_NONE;
  }
};

// libdwfl entry points.
struct DwflApi {
  decltype(&dwfl_begin) begin = nullptr;
  decltype(&dwfl_end) end = nullptr;
  decltype(&dwfl_report_begin_add) report_begin_add = nullptr;
  decltype(&dwfl_linux_proc_report) proc_report = nullptr;
  decltype(&dwfl_report_end) report_end = nullptr;
  decltype(&dwfl_addrmodule) addrmodule = nullptr;
  decltype(&dwfl_module_addrname) addrname = nullptr;
  decltype(&dwfl_module_getsrc) getsrc = nullptr;
  decltype(&dwfl_lineinfo) lineinfo = nullptr;
  decltype(&dwfl_linux_proc_find_elf) find_elf = nullptr;
  decltype(&dwfl_errmsg) errmsg = nullptr;

  bool load(void* library) {
    return bind(library, &begin, "dwfl_begin") && bind(library, &end, "dwfl_end") &&
           bind(library, &report_begin_add, "dwfl_report_begin_add") &&
           bind(library, &proc_report, "dwfl_linux_proc_report") &&
           bind(library, &report_end, "dwfl_report_end") &&
           bind(library, &addrmodule, "dwfl_addrmodule") &&
           bind(library, &addrname, "dwfl_module_addrname") &&
           bind(library, &getsrc, "dwfl_module_getsrc") &&
           bind(library, &lineinfo, "dwfl_lineinfo") &&
           bind(library, &find_elf, "dwfl_linux_proc_find_elf") &&
           bind(library, &errmsg, "dwfl_errmsg");
  }
};

// libdw entry points for inlined calls; optional: without them each pc is
// one frame.
struct InlineApi {
  decltype(&dwfl_module_addrdie) addrdie = nullptr;
  decltype(&dwarf_getscopes) getscopes = nullptr;
  decltype(&dwarf_tag) tag = nullptr;
  decltype(&dwarf_attr) attr = nullptr;
  decltype(&dwarf_attr_integrate) attr_integrate = nullptr;
  decltype(&dwarf_formstring) formstring = nullptr;
  decltype(&dwarf_formudata) formudata = nullptr;
  decltype(&dwarf_diename) diename = nullptr;
  decltype(&dwarf_getsrcfiles) getsrcfiles = nullptr;
  decltype(&dwarf_filesrc) filesrc = nullptr;
  bool loaded = false;

  void load(void* library) {
    loaded = bind(library, &addrdie, "dwfl_module_addrdie") &&
             bind(library, &getscopes, "dwarf_getscopes") && bind(library, &tag, "dwarf_tag") &&
             bind(library, &attr, "dwarf_attr") &&
             bind(library, &attr_integrate, "dwarf_attr_integrate") &&
             bind(library, &formstring, "dwarf_formstring") &&
             bind(library, &formudata, "dwarf_formudata") &&
             bind(library, &diename, "dwarf_diename") &&
             bind(library, &getsrcfiles, "dwarf_getsrcfiles") &&
             bind(library, &filesrc, "dwarf_filesrc");
  }
};

// libdwfl's find_debuginfo callback: separate debug information
// (/usr/lib/debug, .gnu_debuglink, debuginfod) is never looked for; a
// module's own DWARF is used (code built with -g) and otherwise its symbol
// tables. Looking would load libdebuginfod with its thirty-odd libraries
// into the checked process, parse the C library's megabytes of DWARF for
// the frames below main (tens of milliseconds at exit), and could query a
// network server; and a report is about the program's lines, not libc's.
int no_separate_debuginfo(Dwfl_Module*, void**, const char*, Dwarf_Addr, const char*, const char*,
                          GElf_Word, char**) {
  return -1;
}

std::string dl_error() {
  const char* why = dlerror();
  return why != nullptr ? why : "unknown error";
}

// dlopen of `name` from the bundled directory, then from the system. The
// first failure's reason is kept for the verbose line.
void* open_elfutils(const std::string& bundled_dir, const char* name, std::string* where,
                    std::string* why) {
  const std::string bundled = bundled_dir + "/" + name;
  if (void* library = dlopen(bundled.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    *where = bundled;
    return library;
  }
  *why = dl_error();
  if (void* library = dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
    *where = name;
    return library;
  }
  *why += "; " + dl_error();
  return nullptr;
}

// A module's function symbols, sorted by address (ELF virtual addresses).
struct SymbolTable {
  struct Symbol {
    std::uint64_t start, size;
    std::string name;
  };
  std::vector<Symbol> symbols;

  const Symbol* find(std::uint64_t vaddr) const {
    auto it = std::upper_bound(symbols.begin(), symbols.end(), vaddr,
                               [](std::uint64_t a, const Symbol& s) { return a < s.start; });
    if (it == symbols.begin()) return nullptr;
    --it;
    if (vaddr >= it->start && (vaddr < it->start + it->size || it->size == 0)) return &*it;
    return nullptr;
  }
};

SymbolTable read_symbol_table(const ElfApi& elf, const std::string& path) {
  SymbolTable table;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return table;
  Elf* file = elf.begin(fd, ELF_C_READ, nullptr);
  if (file != nullptr) {
    // .symtab when present (it has the static functions), else .dynsym.
    for (const Elf64_Word wanted : {SHT_SYMTAB, SHT_DYNSYM}) {
      for (Elf_Scn* scn = elf.nextscn(file, nullptr); scn != nullptr;
           scn = elf.nextscn(file, scn)) {
        GElf_Shdr header;
        if (elf.getshdr(scn, &header) == nullptr || header.sh_type != wanted ||
            header.sh_entsize == 0)
          continue;
        Elf_Data* data = elf.getdata(scn, nullptr);
        if (data == nullptr) continue;
        const std::size_t count = header.sh_size / header.sh_entsize;
        for (std::size_t i = 0; i < count; ++i) {
          GElf_Sym sym;
          if (elf.getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
          if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0) continue;
          const char* name = elf.strptr(file, header.sh_link, sym.st_name);
          if (name == nullptr || *name == '\0') continue;
          table.symbols.push_back({sym.st_value, sym.st_size, name});
        }
      }
      if (!table.symbols.empty()) break;
    }
    elf.end(file);
  }
  close(fd);
  std::sort(table.symbols.begin(), table.symbols.end(),
            [](const auto& a, const auto& b) { return a.start < b.start; });
  return table;
}

#endif  // XSC_HAVE_ELFUTILS

class ProcessSymbolizer final : public Symbolizer {
 public:
  // The function the code at `pc` was compiled into, at the line `pc` runs.
  Frame symbolize(std::uint64_t pc) override {
    std::vector<Frame> frames;
    symbolize_inlined(pc, &frames);
    Frame frame = frames.back();
    frame.file = frames.front().file;
    frame.line = frames.front().line;
    return frame;
  }

  void symbolize_inlined(std::uint64_t pc, std::vector<Frame>* out) override {
    std::lock_guard<std::mutex> lock(mu_);
    load_once();
    // Timed for verbosity=2 only at report time, so the clock reads cost
    // nothing while the program runs.
    const std::uint64_t begin = monotonic_ns();
    // A report's stacks share most of their frames (main, the C library's
    // start-up), and libdwfl finds a name by scanning the module's whole
    // symbol table: each pc is looked up once while the loaded libraries
    // stay the same.
    const unsigned long long loads = loads_now();
    if (loads != cached_loads_) {
      cached_.clear();
      cached_loads_ = loads;
    }
    auto it = cached_.find(pc);
    const bool look_up = it == cached_.end();
    if (look_up) it = cached_.emplace(pc, symbolize_locked(pc)).first;
    note_symbolized_frame_time(monotonic_ns() - begin, look_up);
    out->insert(out->end(), it->second.begin(), it->second.end());
  }

 private:
  std::vector<Frame> symbolize_locked(std::uint64_t pc) {
    Frame frame;
    frame.pc = pc;
    const ModuleOf module = module_of(pc);
    if (module.found) {
      frame.module = module.path;
      frame.pc = pc - module.bias;  // module-relative, as printed
    }
    std::vector<InlinedCall> calls;
#ifdef XSC_HAVE_ELFUTILS
    // libdwfl reads a module's symbol tables itself: the ELF tables are for
    // modules it does not know.
    const bool dwfl_knows = dwfl_ != nullptr && symbolize_dwarf(pc, &frame, &calls);
    if (!dwfl_knows && frame.function.empty() && elf_loaded_ && module.found &&
        !module.path.empty()) {
      auto it = tables_.find(module.path);
      if (it == tables_.end())
        it = tables_.emplace(module.path, read_symbol_table(elf_, module.path)).first;
      if (const auto* symbol = it->second.find(pc - module.bias))
        frame.function = demangle(symbol->name.c_str());
    }
#endif
    if (frame.function.empty()) {
      Dl_info info;
      if (dladdr(reinterpret_cast<void*>(pc), &info) != 0) {
        frame.function = demangle(info.dli_sname);
        if (frame.module.empty() && info.dli_fname != nullptr) frame.module = info.dli_fname;
      }
    }
    // The innermost inlined call runs at the pc's line; each enclosing
    // function is at the line of the call inlined into it.
    std::vector<Frame> frames;
    frames.reserve(calls.size() + 1);
    std::string file = frame.file;
    std::uint32_t line = frame.line;
    for (InlinedCall& call : calls) {
      Frame inlined = frame;
      inlined.function = std::move(call.function);
      inlined.file = std::move(file);
      inlined.line = line;
      frames.push_back(std::move(inlined));
      file = std::move(call.call_file);
      line = call.call_line;
    }
    frame.file = std::move(file);
    frame.line = line;
    frames.push_back(std::move(frame));
    return frames;
  }

  void load_once() {
    if (tried_) return;
    tried_ = true;
    const std::uint64_t begin = monotonic_ns();
    std::string line;
#ifdef XSC_HAVE_ELFUTILS
    const std::string dir = own_directory() + "/xstream_check";
    std::string elf_where, elf_why, dw_where, dw_why;
    // libelf first: libdw's DT_NEEDED libelf.so.1 then binds to this copy.
    if (void* elf = open_elfutils(dir, "libelf.so.1", &elf_where, &elf_why)) {
      elf_loaded_ = elf_.load(elf);
      if (!elf_loaded_) elf_why = elf_where + " lacks the libelf functions used";
    }
    void* dw = nullptr;
    if (const char* chosen = std::getenv("XSC_LIBDW"); chosen != nullptr && *chosen != '\0') {
      dw = dlopen(chosen, RTLD_NOW | RTLD_LOCAL);
      if (dw != nullptr) dw_where = chosen;
      else dw_why = dl_error();
    } else {
      dw = open_elfutils(dir, "libdw.so.1", &dw_where, &dw_why);
    }
    if (dw != nullptr) {
      inline_api_.load(dw);
      if (!dwfl_api_.load(dw)) {
        dw_why = dw_where + " lacks the libdwfl functions used";
      } else if (!start_dwfl(&dw_why)) {
        dw_why = "libdwfl cannot read this process: " + dw_why;
      }
    }
    if (dwfl_ != nullptr) {
      line = "symbolizer: libdw (" + dw_where + "), libelf (" +
             (elf_loaded_ ? elf_where : std::string("none")) + "): functions, files and lines";
    } else if (elf_loaded_) {
      line = "symbolizer: libelf (" + elf_where + ") symbol tables: functions without lines; "
             "libdw not used (" + dw_why + ")";
    } else {
      line = "symbolizer: dladdr only: exported functions; libdw not used (" + dw_why +
             "), libelf not used (" + elf_why + ")";
    }
#else
    line = "symbolizer: dladdr only (built without elfutils headers): exported functions";
#endif
    note_symbolizer_setup_time(monotonic_ns() - begin);
    if (options().verbosity >= 1) notice(line);
  }

#ifdef XSC_HAVE_ELFUTILS
  bool report_modules(std::string* why) {
    dwfl_api_.report_begin_add(dwfl_);
    const int error = dwfl_api_.proc_report(dwfl_, getpid());
    const int end = dwfl_api_.report_end(dwfl_, nullptr, nullptr);
    reported_loads_ = loads_now();
    if (error != 0) {
      *why = std::string("dwfl_linux_proc_report: ") + std::strerror(error > 0 ? error : EINVAL);
      return false;
    }
    if (end != 0) {
      *why = std::string("dwfl_report_end: ") + dwfl_api_.errmsg(-1);
      return false;
    }
    return true;
  }

  bool start_dwfl(std::string* why) {
    callbacks_.find_elf = dwfl_api_.find_elf;
    callbacks_.find_debuginfo = &no_separate_debuginfo;
    callbacks_.section_address = nullptr;
    callbacks_.debuginfo_path = nullptr;
    dwfl_ = dwfl_api_.begin(&callbacks_);
    if (dwfl_ == nullptr) {
      *why = std::string("dwfl_begin: ") + dwfl_api_.errmsg(-1);
      return false;
    }
    if (!report_modules(why)) {
      dwfl_api_.end(dwfl_);
      dwfl_ = nullptr;
      return false;
    }
    return true;  // kept for the life of the process
  }

  // False when libdwfl knows no module at `pc`. `calls` gets the calls
  // inlined at `pc`, innermost first.
  bool symbolize_dwarf(std::uint64_t pc, Frame* frame, std::vector<InlinedCall>* calls) {
    Dwfl_Module* module = dwfl_api_.addrmodule(dwfl_, pc);
    if (module == nullptr && loads_now() != reported_loads_) {
      // A library loaded since the modules were reported.
      std::string ignored;
      report_modules(&ignored);
      module = dwfl_api_.addrmodule(dwfl_, pc);
    }
    if (module == nullptr) return false;
    frame->function = demangle(dwfl_api_.addrname(module, pc));
    if (Dwfl_Line* line = dwfl_api_.getsrc(module, pc)) {
      int lineno = 0;
      const char* file = dwfl_api_.lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr);
      if (file != nullptr) frame->file = file;
      frame->line = lineno > 0 ? static_cast<std::uint32_t>(lineno) : 0;
    }
    if (inline_api_.loaded) inlined_calls(module, pc, calls);
    return true;
  }

  // dwarf_getscopes gives the scopes at `pc`, innermost first, up to the
  // compile unit: each inlined-subroutine scope is a call, with its callee
  // (DW_AT_abstract_origin, followed by the *_integrate readers) and the
  // file and line of the call, until the subprogram the code belongs to.
  void inlined_calls(Dwfl_Module* module, std::uint64_t pc, std::vector<InlinedCall>* calls) {
    Dwarf_Addr bias = 0;
    Dwarf_Die* unit = inline_api_.addrdie(module, pc, &bias);
    if (unit == nullptr) return;
    Dwarf_Die* scopes = nullptr;
    const int count = inline_api_.getscopes(unit, pc - bias, &scopes);
    if (count <= 0) return;
    Dwarf_Files* files = nullptr;
    std::size_t file_count = 0;
    const bool have_files = inline_api_.getsrcfiles(unit, &files, &file_count) == 0;
    for (int i = 0; i < count; ++i) {
      Dwarf_Die* scope = &scopes[i];
      const int tag = inline_api_.tag(scope);
      if (tag == DW_TAG_subprogram) break;
      if (tag != DW_TAG_inlined_subroutine) continue;
      InlinedCall call;
      call.function = callee_name(scope);
      Dwarf_Attribute attr;
      Dwarf_Word value = 0;
      if (have_files && inline_api_.attr(scope, DW_AT_call_file, &attr) != nullptr &&
          inline_api_.formudata(&attr, &value) == 0 && value < file_count) {
        if (const char* file = inline_api_.filesrc(files, value, nullptr, nullptr))
          call.call_file = file;
      }
      if (inline_api_.attr(scope, DW_AT_call_line, &attr) != nullptr &&
          inline_api_.formudata(&attr, &value) == 0)
        call.call_line = static_cast<std::uint32_t>(value);
      calls->push_back(std::move(call));
    }
    std::free(scopes);
  }

  // The demangled linkage name (with namespaces and parameters, as the
  // symbol tables give other frames), else the plain DW_AT_name.
  std::string callee_name(Dwarf_Die* scope) {
    Dwarf_Attribute attr;
    for (const unsigned name : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
      if (inline_api_.attr_integrate(scope, name, &attr) == nullptr) continue;
      if (const char* linkage = inline_api_.formstring(&attr)) return demangle(linkage);
    }
    const char* plain = inline_api_.diename(scope);
    return plain != nullptr ? plain : "";
  }

  ElfApi elf_;
  bool elf_loaded_ = false;
  DwflApi dwfl_api_;
  InlineApi inline_api_;
  Dwfl_Callbacks callbacks_{};
  Dwfl* dwfl_ = nullptr;
  unsigned long long reported_loads_ = 0;
  std::map<std::string, SymbolTable> tables_;
#endif
  bool tried_ = false;
  std::unordered_map<std::uint64_t, std::vector<Frame>> cached_;
  unsigned long long cached_loads_ = 0;
  std::mutex mu_;
};

}  // namespace

std::string demangle(const char* name) {
  if (name == nullptr) return {};
  int status = 0;
  char* readable = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || readable == nullptr) return name;
  std::string out(readable);
  std::free(readable);
  return out;
}

void install_symbolizer(Session& session) {
  session.stacks().set_symbolizer(std::make_shared<ProcessSymbolizer>());
}

}  // namespace xsc::rt
