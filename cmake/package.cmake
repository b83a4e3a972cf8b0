# package.cmake -- the Debian package, made by CPack from the install() rules
# of CMakeLists.txt (the binary, the Lua library, the docs, the man page;
# never the unit tests or the fuzzers, which have no install rule):
#   cmake --build build --target package     # build/luaload_<version>_<arch>.deb
#   apt install ./build/luaload_0.1.0_amd64.deb
# Installed under /usr. The dependencies are dpkg-shlibdeps' reading of the
# binary (the shared libraries it links and the versions their symbols
# need), not a list kept by hand. See docs/install.md.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME luaload)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "luaload developers <luaload@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "scriptable HTTP load tester (Lua scripts, k6's metrics)")
# the extended description, in lines as the control file has them
string(JOIN "\n" CPACK_PACKAGE_DESCRIPTION
       "luaload runs test scripts written in Lua (LuaJIT) as thousands of virtual"
       "users over its own HTTP/1.1 and HTTP/2 transport (and libcurl for HTTP/3),"
       "with k6's metrics, checks, thresholds and end-of-test summary, exit codes"
       "that gate CI, and a built-in target server (luaload serve). A test can be"
       "split over machines or Kubernetes pods and its parts merged exactly.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # luaload_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION web)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON) # as dh_strip does; the exported symbols (.dynsym) that LuaJIT's FFI needs stay
# no source package: `package_source` would pack the build directory too
set(CPACK_SOURCE_GENERATOR "")
include(CPack)
