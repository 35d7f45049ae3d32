# cmake -DROUTER_DIR=kdc-plugin/router -DLAYERS="a;b;..." -P check_router_layers.cmake
#
# The crypto router's files call each other in one direction only: LAYERS lists its modules
# (a .c and its .h, or a header alone, named by its path in the router without the suffix:
# `route`, `nonces/pool`), upper layers first, and a file may include the
# header of its own module or of a module listed after its own, never one listed before.
# A file of the router that LAYERS does not list fails the check, so that a new file is
# placed in the order when it is added.
file(GLOB_RECURSE sources RELATIVE ${ROUTER_DIR} ${ROUTER_DIR}/*.c ${ROUTER_DIR}/*.h)
set(failures "")
foreach(source IN LISTS sources)
  string(REGEX REPLACE "\\.[ch]$" "" module "${source}")
  list(FIND LAYERS ${module} rank)
  if(rank EQUAL -1)
    list(APPEND failures "${source} is in no layer")
    continue()
  endif()
  file(STRINGS ${ROUTER_DIR}/${source} includes REGEX "^#include \"[^\"]+\\.h\"")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^#include \"([^\"]+)\\.h\".*" "\\1" included "${line}")
    list(FIND LAYERS ${included} included_rank)
    if(included_rank EQUAL -1 OR included STREQUAL module)
      continue()   # not the router's (handle.h, mpc_client.h, ...), or its own header
    endif()
    if(NOT included_rank GREATER rank)
      list(APPEND failures "${source} includes ${included}.h, a layer above or beside it")
    endif()
  endforeach()
endforeach()
if(failures)
  string(REPLACE ";" "\n  " failures "${failures}")
  message(FATAL_ERROR "crypto router layering:\n  ${failures}")
endif()
