# Writes OUTPUT, a C++ source defining `const char* uwaga::apps::FUNCTION()` that returns the text
# of INPUT verbatim (as a raw string literal): how the attention explorer's script and style sheet,
# real .js and .css files in the tree, are built into the programs. apps/CMakeLists.txt runs it:
#   cmake -DINPUT=file.js -DOUTPUT=file_js.cpp -DFUNCTION=name -P embed_text.cmake
file(READ "${INPUT}" text)
set(delimiter "uwaga_embedded")
string(FIND "${text}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "embed_text: ${INPUT} contains )${delimiter}\", which would end its C++ literal")
endif()
get_filename_component(name "${INPUT}" NAME)
file(WRITE "${OUTPUT}.new"
  "// Generated from apps/common/${name} by apps/common/embed_text.cmake: edit that file.\n"
  "namespace uwaga::apps {\n\n"
  "const char* ${FUNCTION}() {\n"
  "  return R\"${delimiter}(${text})${delimiter}\";\n"
  "}\n\n"
  "}  // namespace uwaga::apps\n")
# Rewriting an unchanged file would recompile it.
file(COPY_FILE "${OUTPUT}.new" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.new")
