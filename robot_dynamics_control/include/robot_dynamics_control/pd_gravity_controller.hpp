// PD with gravity compensation in ros2_control's loop (Khalil [9.12]), towards a goal position.
#ifndef ROBOT_DYNAMICS_CONTROL__PD_GRAVITY_CONTROLLER_HPP_
#define ROBOT_DYNAMICS_CONTROL__PD_GRAVITY_CONTROLLER_HPP_

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
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
/// to the effort limits. The goal is the last point of the trajectory_msgs/JointTrajectory on
/// ~/reference (joints matched by name; positions required and within the joints' limits,
/// velocities optional: zero). The reference (q_r, qd_r) reaches a new goal from where it is along a
/// cubic in time, the joints synchronised, whose peak velocity is goal_velocity_scaling times the
/// slowest joint's velocity limit; from activation until a goal arrives, the first valid position
/// (hold).
class PdGravityController
: public JointSpaceController<
    controller_interface::ControllerInterface, pd_gravity_controller::ParamListener, pd_gravity_controller::Params>
{
public:
  controller_interface::return_type update(const rclcpp::Time & time, const rclcpp::Duration & period) override;

  /// Sets the goal from the last point of `msg` (what ~/reference does). Outside the real-time loop.
  /// Returns "" or the reason the message is rejected (the goal is then unchanged).
  std::string set_reference(const trajectory_msgs::msg::JointTrajectory & msg);

  /// A goal in model order, (nq) each; sequence counts the goals received (0: none).
  struct Goal
  {
    std::vector<double> q, qd;
    uint64_t sequence = 0;
  };

protected:
  /// The gains (kp, kd) and the goal's buffers; subscribes to ~/reference.
  controller_interface::CallbackReturn configure_law() override;
  std::string law_name() const override { return "PD + gravity compensation"; }
  /// Goals received before activation are not replayed.
  void activate_reference() override;
  /// The reference holds the first valid position until a goal arrives.
  void latch_hold() override;
  const double * reference_position() const override { return qr_.data(); }
  const double * reference_velocity() const override { return qdr_.data(); }
  std::vector<std::pair<std::string, bool>> per_joint_parameters() const override
  {
    return {{"hold_damping", false}, {"max_tracking_error", false}, {"kp", false}, {"kd", false}};
  }
  std::string parameter_error() const override;
  /// Gains from the parameters into kp_, kd_ (model order); false when a size is wrong.
  bool apply_gains() noexcept override;

private:
  /// The reference at `now` [s] along the profile towards the goal (a new goal starts a profile).
  void follow(const Goal & goal, double now) noexcept;

  std::vector<double> kp_, kd_;
  std::vector<double> qr_, qdr_;         // the reference, model order
  std::vector<double> q0_, delta_;       // the profile: its start and its step
  std::vector<double> goal_qd_;          // the goal's velocity
  double t0_ = 0.0, duration_ = 0.0;     // its start [s] (NaN: at the next tick) and duration [s]
  uint64_t active_ = 0;                  // the goal being followed
  realtime_tools::RealtimeBuffer<Goal> goal_;
  std::mutex receive_mutex_;             // between receivers (outside the real-time loop)
  Goal incoming_;                        // the conversion's buffer (subscription thread)
  uint64_t received_ = 0;
};

}  // namespace robot_dynamics_control

#endif  // ROBOT_DYNAMICS_CONTROL__PD_GRAVITY_CONTROLLER_HPP_
