"""Each kernel's parameter sizes, read from a shared library's CUDA fat
binary: the input of test/tools/param_fill_check.cpp.

    python3 kernel_param_sizes.py LIBRARY [SUBSTRING ...]

Prints "MANGLED SIZE SIZE ..." for every kernel of one architecture's cubins
(the one with the most; a parameter's layout is the host's, whatever the
architecture) whose name
holds one of the SUBSTRINGs (every kernel without any). The sizes are the
cubins' EIATTR_KPARAM_INFO records, the ones cuFuncGetParamInfo answers
from. Cubins compressed with zstd or LZ4 are decompressed with the system's
libzstd and liblz4. Exits 1 with one line on a library without a fat binary,
or with cubins this cannot read.
"""
import ctypes
import ctypes.util
import mmap
import struct
import sys

FATBIN_MAGIC = 0xBA55ED50
ENTRY_CUBIN = 2
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL, EIFMT_SVAL = 1, 2, 3, 4
EIATTR_KPARAM_INFO = 0x17
INFO_PREFIX = b".nv.info."


def fail(message):
    print(f"kernel_param_sizes.py: {message}", file=sys.stderr)
    sys.exit(1)


def fatbin_section(path):
    """The bytes of the library's .nv_fatbin section."""
    try:
        with open(path, "rb") as f:
            elf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")
    if elf[:4] != b"\x7fELF" or elf[4] != 2:
        fail(f"{path}: not a 64-bit ELF file")
    for name, offset, size in sections(elf):
        if name == b".nv_fatbin":
            return elf[offset:offset + size]
    fail(f"{path}: no .nv_fatbin section")


def sections(elf):
    """(name, offset, size) per section of a 64-bit little-endian ELF image
    (the library, or a cubin in it)."""
    shoff = struct.unpack_from("<Q", elf, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx][4]
    for name, _, _, _, offset, size in headers:
        end = elf.find(b"\0", names + name)
        yield elf[names + name:end], offset, size


def decompressor():
    """Decompresses one entry's payload to its stated size, or None."""
    zstd = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
    zstd.ZSTD_decompress.restype = ctypes.c_size_t
    zstd.ZSTD_decompress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p,
                                     ctypes.c_size_t]
    zstd.ZSTD_isError.argtypes = [ctypes.c_size_t]
    lz4 = None
    try:
        lz4 = ctypes.CDLL(ctypes.util.find_library("lz4") or "liblz4.so.1")
        lz4.LZ4_decompress_safe.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int,
                                            ctypes.c_int]
    except OSError:
        pass

    def decompress(payload, size):
        out = ctypes.create_string_buffer(size)
        if payload[:4] == ZSTD_MAGIC:
            n = zstd.ZSTD_decompress(out, size, payload, len(payload))
            return None if zstd.ZSTD_isError(n) else out.raw[:n]
        if lz4 is None:
            return None
        n = lz4.LZ4_decompress_safe(payload, out, len(payload), size)
        return None if n < 0 else out.raw[:n]
    return decompress


def cubin_entries(fatbin):
    """(architecture, offset, entry header size, payload size) per cubin entry."""
    pos = 0
    while pos + 16 <= len(fatbin):
        magic, _, header_size, size = struct.unpack_from("<IHHQ", fatbin, pos)
        if magic != FATBIN_MAGIC:
            pos += 8
            continue
        at, end = pos + header_size, pos + header_size + size
        while at + 0x40 <= end:
            kind, _, entry_header, payload_size = struct.unpack_from("<HHIQ", fatbin, at)
            if kind == ENTRY_CUBIN:
                yield struct.unpack_from("<I", fatbin, at + 0x1C)[0], at, entry_header, payload_size
            at += entry_header + payload_size
        pos = end


def cubins(fatbin, arch):
    """The cubins of one architecture, decompressed (None: unreadable)."""
    decompress = decompressor()
    for entry_arch, at, entry_header, payload_size in cubin_entries(fatbin):
        if entry_arch != arch:
            continue
        compressed = struct.unpack_from("<I", fatbin, at + 0x10)[0]
        full = struct.unpack_from("<Q", fatbin, at + 0x38)[0]
        payload = fatbin[at + entry_header:at + entry_header + payload_size]
        if payload[:4] == b"\x7fELF":
            yield payload
        else:
            yield decompress(payload[:compressed or payload_size], full) if full > 0 else None


def kernel_params(cubin):
    """{kernel name: [parameter sizes in order]} from one cubin."""
    kernels = {}
    for section, offset, size in sections(cubin):
        if not section.startswith(INFO_PREFIX):
            continue
        params = {}
        at = offset
        while at < offset + size:
            form, attr = cubin[at], cubin[at + 1]
            if form == EIFMT_SVAL:
                length = struct.unpack_from("<H", cubin, at + 2)[0]
                if attr == EIATTR_KPARAM_INFO:
                    _, ordinal, _, packed = struct.unpack_from("<IHHI", cubin, at + 4)
                    params[ordinal] = (packed >> 18) & 0x3FFF
                at += 4 + length
            elif form in (EIFMT_BVAL, EIFMT_HVAL):
                at += 4
            elif form == EIFMT_NVAL:
                at += 2
            else:
                break
        if params:
            kernels[section[len(INFO_PREFIX):].decode()] = [params[i] for i in sorted(params)]
    return kernels


def main(argv):
    if len(argv) < 2:
        print("usage: kernel_param_sizes.py LIBRARY [SUBSTRING ...]", file=sys.stderr)
        return 2
    wanted = argv[2:]
    fatbin = fatbin_section(argv[1])
    counts = {}
    for arch, _, _, _ in cubin_entries(fatbin):
        counts[arch] = counts.get(arch, 0) + 1
    if not counts:
        fail(f"{argv[1]}: no cubin in its fat binary")
    arch = max(counts, key=counts.get)
    unreadable = 0
    for cubin in cubins(fatbin, arch):
        if cubin is None or cubin[:4] != b"\x7fELF":
            unreadable += 1
            continue
        for name, sizes in kernel_params(cubin).items():
            if not wanted or any(w in name for w in wanted):
                print(name, " ".join(str(s) for s in sizes))
    if unreadable:
        fail(f"{argv[1]}: {unreadable} of the sm_{arch} cubins could not be decompressed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
