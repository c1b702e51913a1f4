# The engine library's build, written once: its C sources, its headers and its compiler flags.
#
# Two builds read this file: CMakeLists.txt beside it (include()), which makes the static library
# robot_dynamics_engine that robot_dynamics_control links, and robot_dynamics/setup.py, which
# compiles the same sources with the same flags into the Python extension (adding its own two
# CPython sources, module.c and module_batch.c, and OpenMP where the compiler has it). setup.py
# parses the set() commands below: keep each one `set(NAME value value ...)` with plain words
# (no variables, no generator expressions, no quotes).

# the library: everything of the engine but the Python module
set(RD_ENGINE_SOURCES algorithms.c derivatives.c model.c control.c plant.c simulate.c observer.c reachability.c timing.c path.c task_space.c eigen.c compliant.c)
# engine.h is the public header (installed as robot_dynamics_engine/engine.h); the others are private
set(RD_ENGINE_HEADERS engine.h internal.h recursions.h recursions_x4.h crba.h)
# C99; -fno-tree-loop-vectorize and -ffp-contract=fast fix the operation order the recorded numbers
# were made with (simulate.c turns fp-contract off for itself with a pragma, which these flags keep)
set(RD_ENGINE_FLAGS -std=c99 -O3 -fno-tree-loop-vectorize -fvisibility=hidden -fno-math-errno -ffp-contract=fast)
