// Cartesian impedance of one frame in ros2_control's loop (Hogan 1985; Albu-Schaeffer, Ott, Frese and
// Hirzinger 2003), on the effort interfaces: the law of robot_dynamics.control.CartesianImpedance.
#ifndef ROBOT_DYNAMICS_CONTROL__CARTESIAN_IMPEDANCE_CONTROLLER_HPP_
#define ROBOT_DYNAMICS_CONTROL__CARTESIAN_IMPEDANCE_CONTROLLER_HPP_

#include <string>
#include <vector>

#include "robot_dynamics_control/task_space_controller.hpp"
// generate_parameter_library puts the header under the package's name (0.7, Humble) or alone (0.3, Jazzy)
#if __has_include("robot_dynamics_control/cartesian_impedance_controller_parameters.hpp")
#include "robot_dynamics_control/cartesian_impedance_controller_parameters.hpp"
#else
#include "cartesian_impedance_controller_parameters.hpp"
#endif

namespace robot_dynamics_control
{

/// effort = J^T (K e + D e_dot) + C qd + g + friction + N (K_n (q_n - q) - D_n qd): e the pose error
/// [p_d - p; log(R_d R^T)] in base axes, K = diag(stiffness), D designed from the task inertia Lambda
/// each tick so that every mode of Lambda x'' + D x' + K x = 0 has the damping ratio damping_ratio,
/// N the dynamically consistent null-space projector (rd_compliant_control, RD_CARTESIAN_IMPEDANCE).
/// A steady force F at the frame moves it by F / K. The target and the rest: TaskSpaceController.
class CartesianImpedanceController
: public TaskSpaceController<cartesian_impedance_controller::ParamListener, cartesian_impedance_controller::Params>
{
protected:
  int law() const override { return RD_CARTESIAN_IMPEDANCE; }
  std::string law_name() const override;
  bool law_gains() noexcept override;
  void reserve_gains() override;
  std::vector<std::string> positive_parameters() const override { return {"stiffness"}; }
};

}  // namespace robot_dynamics_control

#endif  // ROBOT_DYNAMICS_CONTROL__CARTESIAN_IMPEDANCE_CONTROLLER_HPP_
