// The target of a task-space controller: a frame's pose in the base axes and its twist, received as
// geometry_msgs/PoseStamped outside the real-time loop or written by a controller in front through
// thirteen reference interfaces, read in the loop without allocation or lock.
#ifndef ROBOT_DYNAMICS_CONTROL__TASK_TARGET_HPP_
#define ROBOT_DYNAMICS_CONTROL__TASK_TARGET_HPP_

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "geometry_msgs/msg/pose_stamped.hpp"
#include "realtime_tools/realtime_buffer.h"
#include "robot_dynamics_control/engine_model.hpp"

namespace robot_dynamics_control
{

/// A pose T_base_frame (4 x 4, row-major [R p; 0 0 0 1], p [m]) and the twist [v; w] in base axes
/// [m/s, rad/s] of one frame.
struct TaskPose
{
  std::array<double, 16> T{{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}};
  std::array<double, 6> twist{};
  /// 0: none received since the last clear(); each set() a new number.
  uint64_t sequence = 0;
};

/// The rotation matrix (row-major 3 x 3 into R, a stride of `stride` between rows) of the quaternion
/// (x, y, z, w), normalised; false (R untouched) when a value is not finite or its norm is outside
/// [0.9, 1.1] (a default-constructed orientation, all zeros, is no rotation: w = 1 is).
bool rotation_of_quaternion(double x, double y, double z, double w, double * R, int stride) noexcept;

class TaskTarget
{
public:
  /// The reference interfaces' names after "<controller>/<frame>/", in their order: the position
  /// [m], the orientation as a quaternion, the linear and angular velocity [m/s, rad/s], base axes.
  static const std::array<const char *, 13> & interface_names();

  /// The controlled frame `frame` of `model` (throws std::runtime_error naming the frames when it is
  /// unknown or fixed to the base) and the frames a message's header.frame_id may name: "" and every
  /// frame fixed to the base (its pose in the base applied to the message's). Allocates.
  void configure(const EngineModel & model, const std::string & frame);
  /// The controlled frame's index (rd_task's frame) and name.
  int frame() const { return frame_; }
  const std::string & frame_name() const { return frame_name_; }
  /// The names header.frame_id may hold (for error messages).
  std::string base_frames() const;

  /// The target of `msg` for the loop (what ~/target_pose does), outside the real-time loop: "" or
  /// the reason it is refused (the target is then unchanged): an unknown frame_id, a value not
  /// finite, an orientation that is not a unit quaternion.
  std::string set(const geometry_msgs::msg::PoseStamped & msg);
  /// Forgets the target received (at activation): read() then returns false until the next set().
  void clear();
  /// Real-time: the last target received into `out`; false when none since clear().
  bool read(TaskPose & out) noexcept;

  /// Real-time: the pose and twist of the 13 reference interface values (NaN position or
  /// orientation: false, nothing written; a NaN velocity: zero).
  static bool from_interfaces(const double * values, TaskPose & out) noexcept;

private:
  int frame_ = -1;
  std::string frame_name_;
  std::vector<std::string> base_names_;
  std::vector<std::array<double, 12>> base_poses_;  // R (9) and p (3) of each base frame in the base
  realtime_tools::RealtimeBuffer<TaskPose> buffer_;
  std::mutex mutex_;  // between receivers (outside the real-time loop)
  uint64_t received_ = 0;
};

}  // namespace robot_dynamics_control

#endif  // ROBOT_DYNAMICS_CONTROL__TASK_TARGET_HPP_
