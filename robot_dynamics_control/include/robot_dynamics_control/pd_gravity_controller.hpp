// PD with gravity compensation in ros2_control's loop (Khalil [9.12]), towards a goal position.
#ifndef ROBOT_DYNAMICS_CONTROL__PD_GRAVITY_CONTROLLER_HPP_
#define ROBOT_DYNAMICS_CONTROL__PD_GRAVITY_CONTROLLER_HPP_

#include <string>
#include <vector>

#include "controller_interface/controller_interface.hpp"
#include "realtime_tools/realtime_buffer.h"
#include "robot_dynamics_control/joint_space_controller.hpp"
#include "trajectory_msgs/msg/joint_trajectory.hpp"
// generate_parameter_library puts the header under the package's name (0.7, Humble) or alone (0.3, Jazzy)
#if __has_include("robot_dynamics_control/pd_gravity_controller_parameters.hpp")
#include "robot_dynamics_control/pd_gravity_controller_parameters.hpp"
#else
#include "pd_gravity_controller_parameters.hpp"
#endif

namespace robot_dynamics_control
{

/// effort = Kp (q_r - q) + Kd (qd_r - qd) + Q(q) (rd_pd_gravity, as robot_dynamics.control.PDGravity
/// with gravity="current"), plus the joint friction at qd_r when friction_feedforward is set; clipped
/// to the effort limits. The goal (q_r, qd_r) is the last point of the trajectory_msgs/JointTrajectory
/// on ~/reference (joints matched by name; positions required, velocities optional: zero); from
/// activation until one arrives, the position at activation (hold).
class PdGravityController
: public JointSpaceController<
    controller_interface::ControllerInterface, pd_gravity_controller::ParamListener, pd_gravity_controller::Params>
{
public:
  controller_interface::return_type update(const rclcpp::Time & time, const rclcpp::Duration & period) override;

  /// Sets the goal from the last point of `msg` (what ~/reference does). Outside the real-time loop.
  /// Returns "" or the reason the message is rejected (the goal is then unchanged).
  std::string set_reference(const trajectory_msgs::msg::JointTrajectory & msg);

  /// A goal in model order, (nq) each.
  struct Goal
  {
    std::vector<double> q, qd;
  };

protected:
  /// The gains (kp, kd) and the goal's buffers; subscribes to ~/reference.
  controller_interface::CallbackReturn configure_law() override;
  std::string law_name() const override { return "PD + gravity compensation"; }
  /// The goal becomes the position at activation (hold) until a reference arrives.
  void activate_reference() override;

private:
  /// Gains from the parameters into kp_, kd_ (model order); false when a size is wrong.
  bool apply_gains() noexcept;

  std::vector<double> kp_, kd_;
  realtime_tools::RealtimeBuffer<Goal> goal_;
  Goal incoming_;  // the conversion's buffer (subscription thread)
};

}  // namespace robot_dynamics_control

#endif  // ROBOT_DYNAMICS_CONTROL__PD_GRAVITY_CONTROLLER_HPP_
