// Khatib's operational-space control of one frame in ros2_control's loop (1987; Khalil [9.36]), on
// the effort interfaces: the law of robot_dynamics.control.OperationalSpaceControl.
#ifndef ROBOT_DYNAMICS_CONTROL__OPERATIONAL_SPACE_CONTROLLER_HPP_
#define ROBOT_DYNAMICS_CONTROL__OPERATIONAL_SPACE_CONTROLLER_HPP_

#include <string>
#include <utility>
#include <vector>

#include "robot_dynamics_control/task_space_controller.hpp"
// generate_parameter_library puts the header under the package's name (0.7, Humble) or alone (0.3, Jazzy)
#if __has_include("robot_dynamics_control/operational_space_controller_parameters.hpp")
#include "robot_dynamics_control/operational_space_controller_parameters.hpp"
#else
#include "operational_space_controller_parameters.hpp"
#endif

namespace robot_dynamics_control
{

/// effort = J^T Lambda (Kd e_dot + Kp e - Jdot qd) + C qd + g + friction + N (K_n (q_n - q) - D_n qd):
/// the frame's error equation e'' + Kd e' + Kp e = 0 decoupled by the task inertia Lambda, with
/// Kp = omega^2 and Kd = 2 xi omega per task row unless kp and kd are given (rd_compliant_control,
/// RD_OPERATIONAL_SPACE). The target and the rest: TaskSpaceController.
class OperationalSpaceController
: public TaskSpaceController<operational_space_controller::ParamListener, operational_space_controller::Params>
{
protected:
  int law() const override { return RD_OPERATIONAL_SPACE; }
  std::string law_name() const override;
  bool law_gains() noexcept override;
  void reserve_gains() override;
  std::vector<std::pair<std::string, size_t>> fixed_size_parameters() const override { return {{"kp", 6}, {"kd", 6}}; }
};

}  // namespace robot_dynamics_control

#endif  // ROBOT_DYNAMICS_CONTROL__OPERATIONAL_SPACE_CONTROLLER_HPP_
