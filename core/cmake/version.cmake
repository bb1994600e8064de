# Writes OUTPUT, a header defining UWAGA_VERSION_STRING: "VERSION (git REVISION)". Run at every
# build (cmake -DSOURCE_DIR=… -DVERSION=… -DOUTPUT=… -P version.cmake); the file is rewritten only
# when the string changes, so an unchanged revision recompiles nothing.
set(revision unknown)
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE head RESULT_VARIABLE head_failed
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT head_failed AND head)
    set(revision ${head})
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} status --porcelain
                            --untracked-files=no
                    OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(changes)
      string(APPEND revision "-dirty")
    endif()
  endif()
endif()
set(text "#define UWAGA_VERSION_STRING \"${VERSION} (git ${revision})\"\n")
set(old "")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUTPUT} "${text}")
endif()
