# find_package(robot_dynamics_engine): the engine's C sources, installed by the robot_dynamics
# package into share/robot_dynamics_engine, compiled into the caller's build as the static
# library robot_dynamics_engine::robot_dynamics_engine (its one source list and flag set:
# engine.cmake; the public header: <robot_dynamics_engine/engine.h>).
#
# The caller installs the target where it exports its own library, e.g.
#   install(TARGETS robot_dynamics_engine EXPORT ... ARCHIVE DESTINATION lib
#           PUBLIC_HEADER DESTINATION include/robot_dynamics_engine)
if(NOT TARGET robot_dynamics_engine::robot_dynamics_engine)
  get_filename_component(_rd_engine_dir "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
  if(NOT EXISTS "${_rd_engine_dir}/CMakeLists.txt")
    set(robot_dynamics_engine_FOUND FALSE)
    set(robot_dynamics_engine_NOT_FOUND_MESSAGE "${_rd_engine_dir} holds no CMakeLists.txt: reinstall robot_dynamics")
    return()
  endif()
  add_subdirectory("${_rd_engine_dir}" "${CMAKE_BINARY_DIR}/robot_dynamics_engine")
  unset(_rd_engine_dir)
endif()
set(robot_dynamics_engine_VERSION 0.1.0)
