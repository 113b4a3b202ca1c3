/* Opens the library named by argv[1] with dlopen, closes it, and exits:
 * exit handlers the library registered must not be left pointing at
 * unmapped code. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  void* library = dlopen(argv[1], RTLD_NOW);
  if (library == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 2;
  }
  if (dlclose(library) != 0) return 3;
  printf("closed\n");
  return 0;
}
