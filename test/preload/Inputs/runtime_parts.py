"""Prints what the preloaded runtime's xsc_runtime_parts says."""
import ctypes

read = ctypes.CDLL(None).xsc_runtime_parts
names = (ctypes.c_char_p * 16)()
ns = (ctypes.c_uint64 * 16)()
count = (ctypes.c_uint64 * 16)()
n = read(names, ns, count, 16)
print(f"{n} parts: " + " ".join(names[i].decode() for i in range(n)))
