# runplane_stage_headers(target <PUBLIC|INTERFACE|PRIVATE> path...): the include directory of one
# target, so that the build enforces the direction of dependencies (docs/architecture.md).
#
# Sources spell includes from the source root ("backend/plan/recipe.h"), but no target puts the
# source root on the include path. Instead each target gets <build>/include/<target>/, which holds
# symbolic links to its own folders or headers only (path relative to the source root):
#     <build>/include/runplane_plan/backend/plan -> <source>/backend/plan
# A library reaches a header of another library only by linking it (the include directory travels
# with the target's usage requirements), so an upward or undeclared include fails to compile.
# The links are made at configure time; a path that no longer exists in the sources is an error.
function(runplane_stage_headers target scope)
  if(NOT scope MATCHES "^(PUBLIC|INTERFACE|PRIVATE)$")
    message(FATAL_ERROR "runplane_stage_headers(${target}): scope must be PUBLIC, INTERFACE or "
                        "PRIVATE, got '${scope}'")
  endif()
  set(root ${PROJECT_BINARY_DIR}/include/${target})
  foreach(path IN LISTS ARGN)
    set(original ${PROJECT_SOURCE_DIR}/${path})
    set(link ${root}/${path})
    if(NOT EXISTS ${original})
      message(FATAL_ERROR "runplane_stage_headers(${target}): ${path} does not exist in the sources")
    endif()
    if(IS_SYMLINK ${link})
      file(READ_SYMLINK ${link} current)
      if(current STREQUAL original)
        continue()
      endif()
      file(REMOVE ${link})  # removes the link itself, never what it points to
    elseif(EXISTS ${link})
      message(FATAL_ERROR "runplane_stage_headers(${target}): ${link} exists and is not a link; "
                          "delete ${PROJECT_BINARY_DIR}/include and configure again")
    endif()
    get_filename_component(parent ${link} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${original} ${link} SYMBOLIC)
  endforeach()
  target_include_directories(${target} ${scope} ${root})
endfunction()
