# Finds expirykit's dependencies; shared by the build tree and the installed package.
include(CMakeFindDependencyMacro)
find_dependency(Boost 1.74 CONFIG COMPONENTS filesystem)
find_dependency(nlohmann_json 3 CONFIG)
if(NOT TARGET expirykit_hiredis)
  add_library(expirykit_hiredis INTERFACE IMPORTED)
  if(EXPIRYKIT_HIREDIS_PREFIX)
    # A hiredis 1.x built into a prefix (see ci/hiredis1), with its hiredis_ssl when it was built.
    set(_ek_hiredis_libs "${EXPIRYKIT_HIREDIS_PREFIX}/lib/libhiredis.a")
    if(EXISTS "${EXPIRYKIT_HIREDIS_PREFIX}/lib/libhiredis_ssl.a")
      find_dependency(OpenSSL)
      set(_ek_hiredis_libs "${EXPIRYKIT_HIREDIS_PREFIX}/lib/libhiredis_ssl.a" ${_ek_hiredis_libs} OpenSSL::SSL OpenSSL::Crypto)
      set_target_properties(expirykit_hiredis PROPERTIES INTERFACE_COMPILE_DEFINITIONS EXPIRYKIT_HIREDIS_SSL=1)
      message(STATUS "expirykit: hiredis 1.x with hiredis_ssl from ${EXPIRYKIT_HIREDIS_PREFIX}: TLS on")
    else()
      message(STATUS "expirykit: hiredis from ${EXPIRYKIT_HIREDIS_PREFIX} has no hiredis_ssl: TLS off")
    endif()
    set_target_properties(expirykit_hiredis PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${EXPIRYKIT_HIREDIS_PREFIX}/include"
      INTERFACE_LINK_LIBRARIES "${_ek_hiredis_libs}")
  else()
    # Debian's HiredisConfig.cmake has no target and a broken version file: use pkg-config.
    find_package(PkgConfig REQUIRED)
    pkg_check_modules(EKPC_HIREDIS REQUIRED IMPORTED_TARGET hiredis)
    # hiredis 1.x installs hiredis_ssl.pc beside it; Debian 12's 0.14 has no TLS (resp/tls.hpp).
    pkg_check_modules(EKPC_HIREDIS_SSL QUIET IMPORTED_TARGET hiredis_ssl)
    if(EKPC_HIREDIS_SSL_FOUND)
      set_target_properties(expirykit_hiredis PROPERTIES
        INTERFACE_LINK_LIBRARIES "PkgConfig::EKPC_HIREDIS_SSL;PkgConfig::EKPC_HIREDIS"
        INTERFACE_COMPILE_DEFINITIONS EXPIRYKIT_HIREDIS_SSL=1)
      message(STATUS "expirykit: hiredis ${EKPC_HIREDIS_VERSION} with hiredis_ssl: TLS on")
    else()
      set_target_properties(expirykit_hiredis PROPERTIES INTERFACE_LINK_LIBRARIES PkgConfig::EKPC_HIREDIS)
      message(STATUS "expirykit: hiredis ${EKPC_HIREDIS_VERSION} without hiredis_ssl: TLS off "
                     "(for TLS: -DEXPIRYKIT_HIREDIS_PREFIX=$(bash <kit>/ci/hiredis1), the kit's docs/reference/resp/tls.md)")
    endif()
  endif()
endif()
