# The cuDNN, cuBLAS and NCCL headers that the runtime's interposers
# (runtime/libs/cudnn/, runtime/libs/cublas/, runtime/libs/nccl/) compile against.
#
# They must describe the library that the checked program loads: a header
# older than that library lacks attributes the program sets, a header newer
# than the build supports names what the code does not know. For each
# library, the first of:
#   1. XSC_<LIB>_ROOT (XSC_CUDNN_ROOT, XSC_CUBLAS_ROOT, XSC_NCCL_ROOT), a
#      directory whose include/ holds the library's header; an error when it
#      does not;
#   2. with XSC_LIBRARIES_FROM_TORCH (on by default) and a torch found
#      (XSC_TORCH_ROOT, Torch_DIR, or the torch that Python finds, not
#      imported), the library that torch loads: the nvidia-* wheel beside
#      it, site-packages/nvidia/cudnn, nvidia/cu13 (CUDA 13 wheels) or
#      nvidia/cublas (CUDA 12 wheels), nvidia/nccl (the directories that
#      torch's libraries name in their RPATH), else torch's own include/;
#   3. the CUDA toolkit's include directories, then the system's.
# The configure step prints one line per library: the version the header
# says, its directory, and why it was chosen.
#
# The chosen headers are copied into ${CMAKE_BINARY_DIR}/library-headers/
# <lib>, which the runtime searches before the toolkit's directories. Only
# the library's own headers are copied (cudnn*, cublas*, nccl*): a wheel's
# include/ may hold more (nvidia/cu13/include has the CUDA runtime's), which
# must not replace the toolkit's. Copies, not links, so that a change of
# headers gives the objects a newer dependency and they are rebuilt.
#
# Sets, for the directory that includes this file:
#   XSC_LIBRARY_HEADER_DIRS    the copies' directories, for the runtime
#   XSC_CUDNN_INCLUDE_DIR      the chosen cuDNN include/ (examples/cuda)
#   XSC_CUDNN_LIBRARY          libcudnn beside it, when there is one
#   XSC_<LIB>_HEADER_VERSION   what the header says, e.g. 9.19.0

set(XSC_CUDNN_ROOT "" CACHE PATH "cuDNN's root, with include/cudnn.h (and lib/libcudnn.so.9)")
set(XSC_CUBLAS_ROOT "" CACHE PATH "cuBLAS's root, with include/cublas_api.h")
set(XSC_NCCL_ROOT "" CACHE PATH "NCCL's root, with include/nccl.h")
option(XSC_LIBRARIES_FROM_TORCH
  "Compile the cuDNN, cuBLAS and NCCL interposers against the headers of the libraries torch loads" ON)
# Left in caches by earlier versions of this file, which cached the search.
unset(XSC_CUDNN_INCLUDE_DIR CACHE)
unset(XSC_CUDNN_LIBRARY CACHE)
unset(XSC_CUDNN_ROOT_SEARCHED CACHE)

# The torch package directory the build would use, or "" (not imported:
# only where Python would find it).
function(_xsc_torch_dir out)
  set(dir "${XSC_TORCH_ROOT}")
  if(NOT dir AND Torch_DIR)
    get_filename_component(dir "${Torch_DIR}/../../.." ABSOLUTE)
  endif()
  if(NOT dir)
    find_package(Python3 QUIET COMPONENTS Interpreter)
    if(Python3_Interpreter_FOUND)
      execute_process(
        COMMAND ${Python3_EXECUTABLE} -c
          "import importlib.util as u; s = u.find_spec('torch'); print(list(s.submodule_search_locations)[0] if s and s.submodule_search_locations else '')"
        OUTPUT_VARIABLE dir OUTPUT_STRIP_TRAILING_WHITESPACE
        RESULT_VARIABLE rc ERROR_QUIET TIMEOUT 120)
      if(NOT rc EQUAL 0)
        set(dir "")
      endif()
    endif()
  endif()
  if(dir AND NOT IS_DIRECTORY "${dir}")
    set(dir "")
  endif()
  set(${out} "${dir}" PARENT_SCOPE)
endfunction()

# The CUDA major version torch was built for (torch/version.py), or "".
function(_xsc_torch_cuda_major torch out)
  set(major "")
  if(EXISTS "${torch}/version.py")
    file(STRINGS "${torch}/version.py" line REGEX "^cuda[^=]*= *['\"][0-9]+")
    if(line MATCHES "^cuda[^=]*= *['\"]([0-9]+)")
      set(major "${CMAKE_MATCH_1}")
    endif()
  endif()
  set(${out} "${major}" PARENT_SCOPE)
endfunction()

# "MAJOR.MINOR.PATCH" from the #defines in `file`, or "" when absent.
function(_xsc_header_version file major minor patch out)
  set(version "")
  if(EXISTS "${file}")
    file(STRINGS "${file}" lines REGEX "^#define (${major}|${minor}|${patch}) +[0-9]+")
    set(parts "")
    foreach(name ${major} ${minor} ${patch})
      set(value "")
      foreach(line IN LISTS lines)
        if(line MATCHES "^#define ${name} +([0-9]+)")
          set(value "${CMAKE_MATCH_1}")
        endif()
      endforeach()
      if(value STREQUAL "")
        set(${out} "" PARENT_SCOPE)
        return()
      endif()
      list(APPEND parts ${value})
    endforeach()
    list(JOIN parts "." version)
  endif()
  set(${out} "${version}" PARENT_SCOPE)
endfunction()

# Copies `incdir`'s entries named `prefix`* into `dest`, removing whatever
# else `dest` held.
function(_xsc_copy_headers incdir prefix dest)
  file(GLOB_RECURSE wanted RELATIVE "${incdir}" "${incdir}/${prefix}*")
  # Files under a directory named prefix* (nccl_device/...).
  file(GLOB dirs LIST_DIRECTORIES true RELATIVE "${incdir}" "${incdir}/${prefix}*")
  foreach(d IN LISTS dirs)
    if(IS_DIRECTORY "${incdir}/${d}")
      file(GLOB_RECURSE below RELATIVE "${incdir}" "${incdir}/${d}/*")
      list(APPEND wanted ${below})
    endif()
  endforeach()
  list(FILTER wanted INCLUDE REGEX "\\.(h|hpp|cuh|inl)$")
  list(REMOVE_DUPLICATES wanted)
  file(GLOB_RECURSE present RELATIVE "${dest}" "${dest}/*")
  foreach(f IN LISTS present)
    if(NOT f IN_LIST wanted)
      file(REMOVE "${dest}/${f}")
    endif()
  endforeach()
  foreach(f IN LISTS wanted)
    configure_file("${incdir}/${f}" "${dest}/${f}" COPYONLY)
  endforeach()
endfunction()

# Picks one library's headers; see the top of this file.
#   name: as printed (cuDNN); var: CUDNN; header: the one to find;
#   version_header and its three macros; prefix: what to copy;
#   torch_subdirs: candidates under site-packages/nvidia/.
function(_xsc_pick_library name var header version_header vmajor vminor vpatch prefix torch_subdirs)
  set(root "${XSC_${var}_ROOT}")
  set(incdir "")
  set(libroot "")
  set(why "")
  if(root)
    if(NOT EXISTS "${root}/include/${header}")
      message(FATAL_ERROR " xstream-check: XSC_${var}_ROOT=${root} has no include/${header}")
    endif()
    set(incdir "${root}/include")
    set(libroot "${root}")
    set(why "XSC_${var}_ROOT")
  endif()
  if(NOT incdir AND XSC_LIBRARIES_FROM_TORCH AND _xsc_torch)
    get_filename_component(site "${_xsc_torch}" DIRECTORY)
    foreach(sub IN LISTS torch_subdirs)
      if(EXISTS "${site}/nvidia/${sub}/include/${header}")
        set(incdir "${site}/nvidia/${sub}/include")
        set(libroot "${site}/nvidia/${sub}")
        set(why "the library torch loads: ${_xsc_torch}")
        break()
      endif()
    endforeach()
    if(NOT incdir AND EXISTS "${_xsc_torch}/include/${header}")
      set(incdir "${_xsc_torch}/include")
      set(libroot "${_xsc_torch}")
      set(why "torch's own: ${_xsc_torch}")
    endif()
  endif()
  if(NOT incdir AND CUDAToolkit_FOUND)
    unset(_xsc_found)
    find_path(_xsc_found ${header} HINTS ${CUDAToolkit_INCLUDE_DIRS} NO_CACHE)
    if(_xsc_found)
      set(incdir "${_xsc_found}")
      set(why "the system's")
      file(REAL_PATH "${incdir}" real)
      foreach(d IN LISTS CUDAToolkit_INCLUDE_DIRS)
        file(REAL_PATH "${d}" d)
        if(d STREQUAL real)
          set(why "the CUDA toolkit's")
        endif()
      endforeach()
      if(_xsc_torch AND XSC_LIBRARIES_FROM_TORCH)
        string(APPEND why "; none beside torch at ${_xsc_torch}")
      endif()
    endif()
  endif()

  set(dest "${CMAKE_BINARY_DIR}/library-headers/${prefix}")
  if(NOT incdir)
    file(REMOVE_RECURSE "${dest}")
    set(beside "")
    if(_xsc_torch AND XSC_LIBRARIES_FROM_TORCH)
      set(beside "; none beside torch at ${_xsc_torch}")
    endif()
    message(STATUS "xstream-check: ${name} headers: none found (${header}; set XSC_${var}_ROOT${beside}); "
                   "${name} calls are not checked")
    set(XSC_${var}_HEADER_VERSION "" PARENT_SCOPE)
    return()
  endif()
  get_filename_component(incdir "${incdir}" ABSOLUTE)
  _xsc_header_version("${incdir}/${version_header}" ${vmajor} ${vminor} ${vpatch} version)
  if(NOT version)
    set(version "(version unknown)")
  endif()
  message(STATUS "xstream-check: ${name} ${version} headers: ${incdir} (${why})")
  file(MAKE_DIRECTORY "${dest}")
  _xsc_copy_headers("${incdir}" "${prefix}" "${dest}")
  set(XSC_LIBRARY_HEADER_DIRS ${XSC_LIBRARY_HEADER_DIRS} "${dest}" PARENT_SCOPE)
  set(XSC_${var}_HEADER_VERSION "${version}" PARENT_SCOPE)
  set(XSC_${var}_INCLUDE_DIR "${incdir}" PARENT_SCOPE)
  set(XSC_${var}_LIBROOT "${libroot}" PARENT_SCOPE)
endfunction()

set(XSC_LIBRARY_HEADER_DIRS "")
set(XSC_CUDNN_INCLUDE_DIR "")
set(XSC_CUDNN_LIBRARY "")
set(_xsc_torch "")
if(XSC_LIBRARIES_FROM_TORCH AND
   (NOT XSC_CUDNN_ROOT OR NOT XSC_CUBLAS_ROOT OR NOT XSC_NCCL_ROOT))
  _xsc_torch_dir(_xsc_torch)
endif()
# cuBLAS: CUDA 13's wheels put it in nvidia/cu13 with the rest of the
# toolkit, CUDA 12's in nvidia/cublas; the one matching torch's CUDA first.
_xsc_torch_cuda_major("${_xsc_torch}" _xsc_torch_cuda)
if(_xsc_torch_cuda AND _xsc_torch_cuda LESS 13)
  set(_xsc_cublas_subdirs cublas cu${_xsc_torch_cuda})
elseif(_xsc_torch_cuda)
  set(_xsc_cublas_subdirs cu${_xsc_torch_cuda} cublas)
else()
  set(_xsc_cublas_subdirs cu13 cublas cu12)
endif()

_xsc_pick_library(cuDNN CUDNN cudnn.h cudnn_version.h
  CUDNN_MAJOR CUDNN_MINOR CUDNN_PATCHLEVEL cudnn "cudnn")
_xsc_pick_library(cuBLAS CUBLAS cublas_api.h cublas_api.h
  CUBLAS_VER_MAJOR CUBLAS_VER_MINOR CUBLAS_VER_PATCH cublas "${_xsc_cublas_subdirs}")
_xsc_pick_library(NCCL NCCL nccl.h nccl.h
  NCCL_MAJOR NCCL_MINOR NCCL_PATCH nccl "nccl")

# libcudnn for the example that calls it (examples/cuda/cudnn_write): the
# one beside the chosen headers, else the toolkit's or the system's.
if(XSC_CUDNN_INCLUDE_DIR)
  unset(_xsc_found)
  if(XSC_CUDNN_LIBROOT)
    find_library(_xsc_found NAMES cudnn libcudnn.so.9
      PATHS ${XSC_CUDNN_LIBROOT}/lib ${XSC_CUDNN_LIBROOT}/lib64 NO_DEFAULT_PATH NO_CACHE)
  else()
    find_library(_xsc_found NAMES cudnn libcudnn.so.9 HINTS ${CUDAToolkit_LIBRARY_DIR} NO_CACHE)
  endif()
  if(_xsc_found)
    set(XSC_CUDNN_LIBRARY "${_xsc_found}")
  endif()
endif()
