# In-tree code includes the public header as users do: <distribute/c_api.h>. The
# header stays at include/c_api.h; the build tree gets include/distribute as a
# link to that directory, so the view is never a stale copy. The install tree has
# the same layout (DistInstall.cmake). include/ itself is no include directory,
# so a "c_api.h" that users could not write does not build here either.
set(DIST_HEADER_VIEW_DIR ${PROJECT_BINARY_DIR}/include)
file(MAKE_DIRECTORY ${DIST_HEADER_VIEW_DIR})
file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include ${DIST_HEADER_VIEW_DIR}/distribute SYMBOLIC)
foreach(target distribute distribute_objects)
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${DIST_HEADER_VIEW_DIR}>)
endforeach()
