# cmake -DNM=nm -DOBJECT=file.o -P check_no_imports.cmake: fails when the object file has an undefined symbol (a call
# to anything outside itself: a library function, the C++ runtime, a sanitizer).
execute_process(COMMAND ${NM} -u ${OBJECT} OUTPUT_VARIABLE undefined RESULT_VARIABLE result)
if(NOT result EQUAL 0)
    message(FATAL_ERROR "nm failed on ${OBJECT}")
endif()
if(NOT undefined STREQUAL "")
    message(FATAL_ERROR "the agent's unwind walk calls outside itself:\n${undefined}")
endif()
message(STATUS "the agent's unwind walk calls nothing outside itself")
