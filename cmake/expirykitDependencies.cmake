# Finds expirykit's dependencies; shared by the build tree and the installed package.
include(CMakeFindDependencyMacro)
find_dependency(Boost 1.74 CONFIG COMPONENTS filesystem)
find_dependency(nlohmann_json 3 CONFIG)
if(NOT TARGET expirykit_hiredis)
  add_library(expirykit_hiredis INTERFACE IMPORTED)
  if(EXPIRYKIT_HIREDIS_PREFIX)
    # A hiredis 1.x built into a prefix (see ci/hiredis1).
    set_target_properties(expirykit_hiredis PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${EXPIRYKIT_HIREDIS_PREFIX}/include"
      INTERFACE_LINK_LIBRARIES "${EXPIRYKIT_HIREDIS_PREFIX}/lib/libhiredis.a")
  else()
    # Debian's HiredisConfig.cmake has no target and a broken version file: use pkg-config.
    find_package(PkgConfig REQUIRED)
    pkg_check_modules(EKPC_HIREDIS REQUIRED IMPORTED_TARGET hiredis)
    set_target_properties(expirykit_hiredis PROPERTIES INTERFACE_LINK_LIBRARIES PkgConfig::EKPC_HIREDIS)
  endif()
endif()
