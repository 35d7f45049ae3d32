# cmake -DMODULE=path/mpc_kdb.so -P check_exports.cmake: fails unless the defined
# dynamic symbols of MODULE are exactly kdb_function_table.
find_program(NM nm REQUIRED)
execute_process(COMMAND ${NM} -D --defined-only ${MODULE}
  OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${MODULE}")
endif()
string(REGEX MATCHALL "[^\n]+" lines "${symbols}")
set(names "")
foreach(line IN LISTS lines)
  string(REGEX REPLACE "^[0-9a-fA-F]* *[A-Za-z] +" "" name "${line}")
  list(APPEND names "${name}")
endforeach()
if(NOT names STREQUAL "kdb_function_table")
  message(FATAL_ERROR "${MODULE} defines dynamic symbols [${names}], expected only kdb_function_table")
endif()
