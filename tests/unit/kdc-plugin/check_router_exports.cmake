# cmake -DMODULE=mpc_crypto_router.so -DVERSION_SCRIPT=mpc_crypto_router.exports
#       -DK5CRYPTO=libk5crypto.so.3 -DKRB5=libkrb5.so.3 -P check_router_exports.cmake
#
# The crypto router's dynamic symbols against the version script made from interposers.h:
# every symbol it names is defined by the module under the node it is listed in, the module
# defines nothing else, and each interposed name is defined under the same version by
# libk5crypto or libkrb5 (a definition under another version name would catch no call).
cmake_minimum_required(VERSION 3.16)   # if(... IN_LIST ...)
find_program(NM nm REQUIRED)

function(defined_symbols library out)
  execute_process(COMMAND ${NM} -D --defined-only ${library}
    OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm failed on ${library}")
  endif()
  string(REGEX MATCHALL "[^\n]+" lines "${text}")
  set(names "")
  foreach(line IN LISTS lines)
    # "ADDRESS T name@@VERSION"; version nodes themselves are "A VERSION" (absolute).
    if(line MATCHES "^[0-9a-fA-F]* *[TtDdBbRrWwVvi] +([^ ]+)$")
      list(APPEND names "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

# name@@NODE for each "NODE { global: a; b; ... }" block of the script.
file(READ ${VERSION_SCRIPT} script)
string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" "" script "${script}")
string(REPLACE ";" " " script "${script}")   # CMake lists are ;-separated
string(REGEX MATCHALL "[A-Za-z0-9_]+[ \t\n]*{[^}]*}" blocks "${script}")
set(expected "")
foreach(block IN LISTS blocks)
  string(REGEX MATCH "^[A-Za-z0-9_]+" node "${block}")
  string(REGEX REPLACE "local:[^}]*" "" block "${block}")
  string(REGEX REPLACE "^[A-Za-z0-9_]+[ \t\n]*{[ \t\n]*global:" "" names "${block}")
  string(REGEX MATCHALL "[A-Za-z0-9_]+" names "${names}")
  foreach(name IN LISTS names)
    list(APPEND expected "${name}@@${node}")
  endforeach()
endforeach()
list(LENGTH expected count)
if(count LESS 50)
  message(FATAL_ERROR "${VERSION_SCRIPT} names only ${count} symbols: [${expected}]")
endif()

defined_symbols(${MODULE} defined)
list(SORT expected)
list(SORT defined)
if(NOT defined STREQUAL expected)
  set(missing ${expected})
  list(REMOVE_ITEM missing ${defined})
  set(extra ${defined})
  list(REMOVE_ITEM extra ${expected})
  message(FATAL_ERROR "${MODULE}: not defined [${missing}], not in the version script [${extra}]")
endif()

defined_symbols(${K5CRYPTO} k5crypto)
defined_symbols(${KRB5} krb5)
set(originals ${k5crypto} ${krb5})
foreach(symbol IN LISTS expected)
  # The router's own interface with mpc_kdb (router_kdb_interface.h) is the one exception.
  if(NOT symbol MATCHES "@@MPC_ROUTER_KDB_[0-9]+$" AND NOT symbol IN_LIST originals)
    message(FATAL_ERROR "${symbol} is interposed, but neither ${K5CRYPTO} nor ${KRB5} "
                        "defines it under that version")
  endif()
endforeach()
