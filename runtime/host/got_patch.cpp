// See got_patch.h. Reads the object's dynamic section as the dynamic linker
// left it: on most targets it rewrote the table addresses (DT_SYMTAB,
// DT_STRTAB, DT_JMPREL, DT_RELA) to absolute ones in place; where the
// section is read-only they are still relative to the load address, and
// an address below that base is taken as one.
#include "runtime/host/got_patch.h"

#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace xsc::rt {
namespace {

#if defined(__x86_64__)
constexpr std::uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr std::uint32_t kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr std::uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr std::uint32_t kGlobDat = R_AARCH64_GLOB_DAT;
#else
#error "got_patch.cpp: relocation types for this architecture"
#endif

struct DynamicTables {
  const ElfW(Sym)* symbols = nullptr;
  const char* strings = nullptr;
  const ElfW(Rela)* plt_relocations = nullptr;
  std::size_t plt_size = 0;
  bool plt_is_rela = true;
  const ElfW(Rela)* relocations = nullptr;
  std::size_t size = 0;
};

std::uintptr_t absolute(std::uintptr_t base, std::uintptr_t value) {
  return value < base ? base + value : value;
}

bool read_dynamic(const struct dl_phdr_info& object, DynamicTables* tables) {
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < object.dlpi_phnum; ++i)
    if (object.dlpi_phdr[i].p_type == PT_DYNAMIC)
      dynamic = reinterpret_cast<const ElfW(Dyn)*>(object.dlpi_addr + object.dlpi_phdr[i].p_vaddr);
  if (dynamic == nullptr) return false;  // a static executable: nothing to rewrite
  const std::uintptr_t base = object.dlpi_addr;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB:
        tables->symbols = reinterpret_cast<const ElfW(Sym)*>(absolute(base, d->d_un.d_ptr));
        break;
      case DT_STRTAB:
        tables->strings = reinterpret_cast<const char*>(absolute(base, d->d_un.d_ptr));
        break;
      case DT_JMPREL:
        tables->plt_relocations =
            reinterpret_cast<const ElfW(Rela)*>(absolute(base, d->d_un.d_ptr));
        break;
      case DT_PLTRELSZ:
        tables->plt_size = d->d_un.d_val;
        break;
      case DT_PLTREL:
        tables->plt_is_rela = d->d_un.d_val == DT_RELA;
        break;
      case DT_RELA:
        tables->relocations = reinterpret_cast<const ElfW(Rela)*>(absolute(base, d->d_un.d_ptr));
        break;
      case DT_RELASZ:
        tables->size = d->d_un.d_val;
        break;
      default:
        break;
    }
  }
  return tables->symbols != nullptr && tables->strings != nullptr && tables->plt_is_rela;
}

// The slots' pages that RELRO made read-only: written through a writable
// mapping for the moment of the write.
struct Relro {
  std::uintptr_t begin = 0, end = 0;
};

Relro relro_of(const struct dl_phdr_info& object) {
  for (int i = 0; i < object.dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = object.dlpi_phdr[i];
    if (ph.p_type == PT_GNU_RELRO)
      return {object.dlpi_addr + ph.p_vaddr, object.dlpi_addr + ph.p_vaddr + ph.p_memsz};
  }
  return {};
}

bool write_slot(void** slot, void* value, const Relro& relro) {
  const auto address = reinterpret_cast<std::uintptr_t>(slot);
  if (address < relro.begin || address >= relro.end) {
    *slot = value;  // an ordinary writable table (lazy binding)
    return true;
  }
  const auto page_size = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  void* page = reinterpret_cast<void*>(address & ~(page_size - 1));
  if (mprotect(page, page_size, PROT_READ | PROT_WRITE) != 0) return false;
  *slot = value;
  mprotect(page, page_size, PROT_READ);
  return true;
}

std::size_t patch_table(const struct dl_phdr_info& object, const DynamicTables& tables,
                        const ElfW(Rela)* relocations, std::size_t bytes, const GotHook* hooks,
                        std::size_t count, const Relro& relro) {
  if (relocations == nullptr) return 0;
  std::size_t rewritten = 0;
  for (std::size_t i = 0; i < bytes / sizeof(ElfW(Rela)); ++i) {
    const ElfW(Rela)& r = relocations[i];
    const auto type = static_cast<std::uint32_t>(ELF64_R_TYPE(r.r_info));
    if (type != kJumpSlot && type != kGlobDat) continue;
    const std::size_t symbol = ELF64_R_SYM(r.r_info);
    if (symbol == 0) continue;
    const char* name = tables.strings + tables.symbols[symbol].st_name;
    for (std::size_t h = 0; h < count; ++h) {
      if (std::strcmp(name, hooks[h].name) != 0) continue;
      auto** slot = reinterpret_cast<void**>(object.dlpi_addr + r.r_offset);
      if (write_slot(slot, hooks[h].replacement, relro)) ++rewritten;
      break;
    }
  }
  return rewritten;
}

// Which loaded objects a walk rewrites: the executable (prefix null) or
// the libraries whose file names begin with `prefix`.
struct Walk {
  const char* prefix = nullptr;
  const GotHook* hooks = nullptr;
  std::size_t count = 0;
  std::size_t rewritten = 0;
};

int patch_matching(struct dl_phdr_info* info, std::size_t, void* raw) {
  auto* walk = static_cast<Walk*>(raw);
  if (walk->prefix == nullptr) {
    walk->rewritten = patch_got(*info, walk->hooks, walk->count);
    return 1;  // the first object, the executable, only
  }
  const char* name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  const char* base = std::strrchr(name, '/');
  base = base != nullptr ? base + 1 : name;
  if (std::strncmp(base, walk->prefix, std::strlen(walk->prefix)) == 0)
    walk->rewritten += patch_got(*info, walk->hooks, walk->count);
  return 0;
}

}  // namespace

std::size_t patch_executable_got(const GotHook* hooks, std::size_t count) {
  Walk walk{nullptr, hooks, count};
  dl_iterate_phdr(&patch_matching, &walk);
  return walk.rewritten;
}

std::size_t patch_library_got(const char* prefix, const GotHook* hooks, std::size_t count) {
  Walk walk{prefix, hooks, count};
  dl_iterate_phdr(&patch_matching, &walk);
  return walk.rewritten;
}

std::size_t patch_got(const struct dl_phdr_info& object, const GotHook* hooks, std::size_t count) {
  DynamicTables tables;
  if (!read_dynamic(object, &tables)) return 0;
  const Relro relro = relro_of(object);
  return patch_table(object, tables, tables.plt_relocations, tables.plt_size, hooks, count, relro) +
         patch_table(object, tables, tables.relocations, tables.size, hooks, count, relro);
}

}  // namespace xsc::rt
