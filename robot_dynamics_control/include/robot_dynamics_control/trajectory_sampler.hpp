// Joint trajectories for the controllers: a trajectory_msgs/JointTrajectory converted once (outside
// the real-time loop) into flat arrays in model order, and sampled by Hermite interpolation in it.
#ifndef ROBOT_DYNAMICS_CONTROL__TRAJECTORY_SAMPLER_HPP_
#define ROBOT_DYNAMICS_CONTROL__TRAJECTORY_SAMPLER_HPP_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "trajectory_msgs/msg/joint_trajectory.hpp"

namespace robot_dynamics_control
{

/// Waypoints in model order. Derivatives are given for all points or none: velocities make the
/// segments cubic Hermite, velocities and accelerations quintic Hermite, positions alone linear.
struct Trajectory
{
  int nq = 0;
  size_t points = 0;
  std::vector<double> t;            ///< time from start [s], (points), increasing
  std::vector<double> q, qd, qdd;   ///< (points * nq) [rad or m, /s, /s^2]
  bool has_velocity = false, has_acceleration = false;
  double stamp = 0.0;               ///< header stamp [s]; 0: starts when the controller first sees it
  uint64_t sequence = 0;            ///< set by the receiver: a new trajectory has a new number
};

/// Converts `msg` into `out` (joints matched by name: `joints` in the controller's order, `index`
/// their model indices, nq the model's joint count). Allocates: outside the real-time loop only.
/// Returns "" or the reason the message is rejected (unknown or missing joints, wrong lengths,
/// non-finite values, times not increasing).
std::string trajectory_from_message(
  const trajectory_msgs::msg::JointTrajectory & msg, const std::vector<std::string> & joints,
  const std::vector<int> & index, int nq, Trajectory & out);

/// The reference at time s [s] after the trajectory's start, from the state (q0, qd0, qdd0) held at
/// s = 0 (the reference when it was received) through the waypoints; after the last one, its
/// position at rest. Outputs (nq) each. No allocation.
void sample_trajectory(
  const Trajectory & tr, const double * q0, const double * qd0, const double * qdd0, double s, double * q,
  double * qd, double * qdd) noexcept;

/// One joint's position p [rad or m], velocity v [/s] and acceleration a [/s^2].
struct JointPoint
{
  double p = 0.0, v = 0.0, a = 0.0;
};

/// One joint's Hermite segment over [0, T] [s] at time s [s] from `start` to `end`: order 5
/// (quintic), 3 (cubic: accelerations ignored) or 1 (linear).
JointPoint hermite(int order, double T, double s, const JointPoint & start, const JointPoint & end) noexcept;

}  // namespace robot_dynamics_control

#endif  // ROBOT_DYNAMICS_CONTROL__TRAJECTORY_SAMPLER_HPP_
