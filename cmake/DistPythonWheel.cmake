# Under scikit-build-core (pip install / pip wheel, see pyproject.toml) the install
# step fills the wheel: the Python package comes from bindings/python/distribute,
# and this puts the library beside its modules, under its SONAME, where
# distribute/_native.py loads it first. A wheel keeps no symlinks, so the library
# goes in once, as a file named libdistribute.so.<ABI>, not as the usual
# libdistribute.so -> .so.<ABI> -> .so.<version> chain. No header, pkg-config or
# CMake files: those are for C consumers (cmake --install, DistInstall.cmake).
# Its dependencies (UCX, hwloc, OpenSSL) are the system's, found by the loader.
install(FILES $<TARGET_FILE:distribute>
  DESTINATION distribute
  RENAME libdistribute.so.${DIST_ABI_VERSION})
