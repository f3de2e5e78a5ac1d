# What `cmake --install` puts in place (included from CMakeLists.txt after
# the `tracebench` target):
#   bin/tracebench                      the command line
#   lib/libtracebench.so.*              shared library (link-time optimised
#                                       in optimised builds)
#   lib/libtracebench.a                 static library, linkable by gcc and
#                                       clang alike (see below)
#   include/tracebench/*.h              the library's headers (not sim.h,
#                                       roundtrip.h, gen.h, codecov.h,
#                                       profile.h or elfinfo.h: the
#                                       simulator, round trip,
#                                       generator and analysis/ are not installed)
#   lib/pkgconfig/tracebench.pc         pkg-config (nothing beyond libc needed)
#   lib/cmake/tracebench/               find_package(tracebench): imported
#                                       targets tracebench::tracebench (shared)
#                                       and tracebench::tracebench_static
#   share/man/man1/tracebench.1         the manual
#   share/doc/tracebench/               README.md, docs/*.md (which the
#                                       headers cite), examples/
#   share/tracebench/vectors/           the conformance vectors, their README,
#                                       spec-coverage.tsv and vectors.md (`conform`)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
include(CheckCCompilerFlag)

set(TB_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tracebench)
# Every header of include/tracebench but those of the libraries that stay
# in the build tree (tb_sim, tb_roundtrip).
file(GLOB TB_PUBLIC_HEADERS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/tracebench/*.h)
list(FILTER TB_PUBLIC_HEADERS EXCLUDE REGEX "/(sim|roundtrip|gen|codecov|profile|elfinfo)\\.h$")

# The shared library: the static library's sources again, as position-
# independent code.  Calls between the library's own functions stay
# direct (and inlinable) with -fno-semantic-interposition.
# Before 1.0 a minor release may change the ABI (0.2.0: the size fields
# of tb_config, tb_encoder_opts and the one ETMv1/ETMv2 port
# configuration; the port capture header writers return int; the
# per-protocol parsers, decoders, writers and port encoders no longer
# exported), so the soname carries the minor version too.
add_library(tracebench_shared SHARED ${TB_LIB_SOURCES})
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(TB_SOVERSION 0.${PROJECT_VERSION_MINOR})
else()
  set(TB_SOVERSION ${PROJECT_VERSION_MAJOR})
endif()
set_target_properties(tracebench_shared PROPERTIES
  OUTPUT_NAME tracebench EXPORT_NAME tracebench
  VERSION ${PROJECT_VERSION} SOVERSION ${TB_SOVERSION}
  # Export only what the installed headers declare (TB_API,
  # include/tracebench/export.h); ctest `exports` holds it so.
  C_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
target_include_directories(tracebench_shared PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
check_c_compiler_flag(-fno-semantic-interposition TB_HAVE_NO_SEMANTIC_INTERPOSITION)
if(TB_HAVE_NO_SEMANTIC_INTERPOSITION)
  target_compile_options(tracebench_shared PRIVATE -fno-semantic-interposition)
endif()

# The static library.  With link-time optimisation GCC's objects hold
# LTO bytecode only, which neither clang nor a GCC without -flto can
# link.  The in-tree `tracebench` archive stays as it is (the CLI,
# benchmarks and tests link it with LTO; its objects are not touched, so
# nothing in the tree gets slower).  The installed archive is made from
# the same objects by an LTO partial link (-r -flinker-output=nolto-rel):
# one native object, optimised across files as the in-tree programs are,
# which any compiler links (in one LTO partition: split, it decoded 4%
# slower in bench_decode; whole, as fast as the in-tree build).  Other
# compilers with LTO (clang 14 has no
# such partial link) get a second, plain build of the sources.
set(TB_STATIC_DIR ${PROJECT_BINARY_DIR}/install-static)
if(NOT CMAKE_INTERPROCEDURAL_OPTIMIZATION)
  set(TB_STATIC_FILE $<TARGET_FILE:tracebench>)
elseif(CMAKE_C_COMPILER_ID STREQUAL "GNU" AND CMAKE_C_COMPILER_VERSION VERSION_GREATER_EQUAL 10)
  string(TOUPPER "${CMAKE_BUILD_TYPE}" _tb_cfg)
  separate_arguments(_tb_lto_flags UNIX_COMMAND "${CMAKE_C_FLAGS} ${CMAKE_C_FLAGS_${_tb_cfg}}")
  list(APPEND _tb_lto_flags ${CMAKE_C_COMPILE_OPTIONS_IPO})
  set(TB_STATIC_FILE ${TB_STATIC_DIR}/libtracebench.a)
  add_custom_command(OUTPUT ${TB_STATIC_FILE}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${TB_STATIC_DIR}
    COMMAND ${CMAKE_C_COMPILER} ${_tb_lto_flags} -flto-partition=one -r -flinker-output=nolto-rel
            -o ${TB_STATIC_DIR}/tracebench.o $<TARGET_OBJECTS:tracebench>
    COMMAND ${CMAKE_COMMAND} -E rm -f ${TB_STATIC_FILE}.tmp
    COMMAND ${CMAKE_AR} qc ${TB_STATIC_FILE}.tmp ${TB_STATIC_DIR}/tracebench.o
    COMMAND ${CMAKE_RANLIB} ${TB_STATIC_FILE}.tmp
    COMMAND ${CMAKE_COMMAND} -E rename ${TB_STATIC_FILE}.tmp ${TB_STATIC_FILE}
    DEPENDS tracebench $<TARGET_OBJECTS:tracebench>
    COMMAND_EXPAND_LISTS VERBATIM
    COMMENT "libtracebench.a for installation: LTO partial link to native code")
  add_custom_target(tracebench_static ALL DEPENDS ${TB_STATIC_FILE})
else()
  add_library(tracebench_static STATIC ${TB_LIB_SOURCES})
  set_target_properties(tracebench_static PROPERTIES
    OUTPUT_NAME tracebench INTERPROCEDURAL_OPTIMIZATION OFF
    ARCHIVE_OUTPUT_DIRECTORY ${TB_STATIC_DIR})
  target_include_directories(tracebench_static PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>)
  set(TB_STATIC_FILE $<TARGET_FILE:tracebench_static>)
endif()

install(TARGETS tracebench_shared
  EXPORT tracebenchTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# (tracebenchConfig.cmake defines tracebench::tracebench_static itself.)
install(FILES ${TB_STATIC_FILE} DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${TB_PUBLIC_HEADERS} ${PROJECT_BINARY_DIR}/include/tracebench/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tracebench)
install(FILES ${PROJECT_SOURCE_DIR}/docs/tracebench.1
  DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
# The documentation the headers cite (docs/NAME.md, so that a citation
# resolves in share/doc/tracebench/ as in the source tree), the README,
# and the examples as a project of one's own (examples/CMakeLists.txt
# builds them against the installed library).
file(GLOB TB_DOC_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${TB_DOC_FILES} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples
  USE_SOURCE_PERMISSIONS)
# examples/program/build.sh finds the vector programs' runtime here.
install(FILES ${PROJECT_SOURCE_DIR}/vectors/programs/crt0.S ${PROJECT_SOURCE_DIR}/vectors/programs/lib.c
  ${PROJECT_SOURCE_DIR}/vectors/programs/link.ld
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples/program/runtime)
# The conformance vectors with their README and the spec-coverage
# catalogue (the sections `tracebench conform` names), where `tracebench
# conform` looks for them (relative to bin/, so the prefix can move).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/vectors/generated/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/tracebench/vectors)
install(FILES ${PROJECT_SOURCE_DIR}/vectors/spec-coverage.tsv ${PROJECT_SOURCE_DIR}/docs/vectors.md
  DESTINATION ${CMAKE_INSTALL_DATADIR}/tracebench/vectors)

# `make vectors-dist`: the vectors alone, for decoder writers who want no
# build: tracebench-vectors-VERSION.tar.gz with the same tree as
# share/tracebench/vectors (`tracebench conform --vectors DIR` reads it).
set(TB_VDIST tracebench-vectors-${PROJECT_VERSION})
add_custom_target(vectors-dist
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${PROJECT_BINARY_DIR}/vdist
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/vdist
  COMMAND ${CMAKE_COMMAND} -E copy_directory ${PROJECT_SOURCE_DIR}/vectors/generated
          ${PROJECT_BINARY_DIR}/vdist/${TB_VDIST}
  COMMAND ${CMAKE_COMMAND} -E copy ${PROJECT_SOURCE_DIR}/vectors/spec-coverage.tsv
          ${PROJECT_SOURCE_DIR}/docs/vectors.md ${PROJECT_BINARY_DIR}/vdist/${TB_VDIST}
  COMMAND ${CMAKE_COMMAND} -E chdir ${PROJECT_BINARY_DIR}/vdist
          ${CMAKE_COMMAND} -E tar czf ${PROJECT_BINARY_DIR}/${TB_VDIST}.tar.gz ${TB_VDIST}
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${PROJECT_BINARY_DIR}/vdist
  COMMENT "${TB_VDIST}.tar.gz: the conformance vectors alone"
  VERBATIM)

# CMake package.
install(EXPORT tracebenchTargets NAMESPACE tracebench::
  DESTINATION ${TB_INSTALL_CMAKEDIR})
set(TB_STATIC_LIB ${CMAKE_INSTALL_LIBDIR}/libtracebench.a)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tracebenchConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tracebenchConfig.cmake
  INSTALL_DESTINATION ${TB_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR TB_STATIC_LIB)
# 0.x: a minor release may break the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tracebenchConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tracebenchConfig.cmake
  ${PROJECT_BINARY_DIR}/tracebenchConfigVersion.cmake
  DESTINATION ${TB_INSTALL_CMAKEDIR})

# pkg-config: written at install time, so that its paths are those of the
# prefix actually installed to (cmake --install --prefix P).  The version
# goes in now; the placeholders for the paths survive this first pass.
set(TB_PC_PREFIX "@TB_PC_PREFIX@")
set(TB_PC_LIBDIR "@TB_PC_LIBDIR@")
set(TB_PC_INCLUDEDIR "@TB_PC_INCLUDEDIR@")
configure_file(${PROJECT_SOURCE_DIR}/cmake/tracebench.pc.in
  ${PROJECT_BINARY_DIR}/pkgconfig/tracebench.pc.in @ONLY)
install(CODE "
  set(TB_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  if(IS_ABSOLUTE \"${CMAKE_INSTALL_LIBDIR}\")
    set(TB_PC_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
    set(_tb_pc_dest \"${CMAKE_INSTALL_LIBDIR}/pkgconfig\")
  else()
    set(TB_PC_LIBDIR \"\\\${prefix}/${CMAKE_INSTALL_LIBDIR}\")
    set(_tb_pc_dest \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig\")
  endif()
  if(IS_ABSOLUTE \"${CMAKE_INSTALL_INCLUDEDIR}\")
    set(TB_PC_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
  else()
    set(TB_PC_INCLUDEDIR \"\\\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}\")
  endif()
  string(MD5 _tb_pc_tag \"\${CMAKE_INSTALL_PREFIX}\")
  set(_tb_pc_dir \"${PROJECT_BINARY_DIR}/pkgconfig/\${_tb_pc_tag}\")
  configure_file(\"${PROJECT_BINARY_DIR}/pkgconfig/tracebench.pc.in\"
                 \"\${_tb_pc_dir}/tracebench.pc\" @ONLY)
  file(INSTALL DESTINATION \"\${_tb_pc_dest}\"
       TYPE FILE FILES \"\${_tb_pc_dir}/tracebench.pc\")
")
