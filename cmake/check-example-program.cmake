# ctest example_program: cmake -DSRC=source-dir -DBIN=build-dir -DCLI=tracebench
# -P this.  The program of one's own (examples/program, README "A program
# of your own") must keep working as documented:
#   - examples/program/build.sh builds irq_counter.c with the flags of
#     vectors/CMakeLists.txt (TB_ARM_FLAGS, each of them in build.sh);
#   - `tracebench roundtrip` runs it with its scenario, and both protocols
#     MATCH over the whole run (--strict: not cut by the budget) with the
#     ten IRQs the scenario asserts taken.
file(READ ${SRC}/vectors/CMakeLists.txt vcm)
string(REGEX MATCH "set\\(TB_ARM_FLAGS ([^)]*)\\)" m "${vcm}")
if(NOT m)
  message(FATAL_ERROR "no set(TB_ARM_FLAGS ...) in vectors/CMakeLists.txt")
endif()
separate_arguments(flags UNIX_COMMAND "${CMAKE_MATCH_1}")
file(READ ${SRC}/examples/program/build.sh sh)
foreach(f IN LISTS flags)
  string(FIND "${sh}" " ${f}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "examples/program/build.sh lacks ${f} (vectors/CMakeLists.txt: ${CMAKE_MATCH_1})")
  endif()
endforeach()
set(elf ${BIN}/examples/irq_counter.elf)
file(MAKE_DIRECTORY ${BIN}/examples)
execute_process(COMMAND sh ${SRC}/examples/program/build.sh ${elf} RESULT_VARIABLE rc
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "examples/program/build.sh: exit ${rc}\n${err}")
endif()
execute_process(COMMAND ${CLI} roundtrip ${elf} --scenario ${SRC}/examples/program/irq_counter.ini
                        --strict --quiet
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tracebench roundtrip irq_counter.elf: exit ${rc}\n${out}${err}")
endif()
foreach(p ptm etmv3)
  string(REGEX MATCH "${p} +MATCH: [0-9]+ instructions run, [0-9]+ traced, [0-9]+ checked, 10 exceptions" hit "${out}")
  if(NOT hit)
    message(FATAL_ERROR "${p}: no MATCH with 10 exceptions:\n${out}")
  endif()
endforeach()
string(FIND "${out}" "stopped: the program reached its exit" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the run did not reach _exit:\n${out}")
endif()
message(STATUS "examples/program: built as documented, ptm and etmv3 MATCH with 10 IRQs")
