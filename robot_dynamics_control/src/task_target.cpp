#include "robot_dynamics_control/task_target.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace robot_dynamics_control
{

bool rotation_of_quaternion(double x, double y, double z, double w, double * R, int stride) noexcept
{
  const double n2 = x * x + y * y + z * z + w * w;
  if (!std::isfinite(n2) || n2 < 0.81 || n2 > 1.21) {
    return false;
  }
  const double s = 2.0 / n2;  // the normalised quaternion's rotation
  const double xx = s * x * x, yy = s * y * y, zz = s * z * z;
  const double xy = s * x * y, xz = s * x * z, yz = s * y * z, wx = s * w * x, wy = s * w * y, wz = s * w * z;
  double * r0 = R, * r1 = R + stride, * r2 = R + 2 * stride;
  r0[0] = 1.0 - yy - zz, r0[1] = xy - wz, r0[2] = xz + wy;
  r1[0] = xy + wz, r1[1] = 1.0 - xx - zz, r1[2] = yz - wx;
  r2[0] = xz - wy, r2[1] = yz + wx, r2[2] = 1.0 - xx - yy;
  return true;
}

const std::array<const char *, 13> & TaskTarget::interface_names()
{
  static const std::array<const char *, 13> names = {
    "position.x", "position.y", "position.z", "orientation.x", "orientation.y", "orientation.z", "orientation.w",
    "linear_velocity.x", "linear_velocity.y", "linear_velocity.z", "angular_velocity.x", "angular_velocity.y",
    "angular_velocity.z"};
  return names;
}

void TaskTarget::configure(const EngineModel & model, const std::string & frame)
{
  const rd_model & m = model.model();
  const auto & names = model.frame_names();
  frame_ = model.frame_index(frame);  // throws naming the frames
  if (m.frame[frame_].body < 0) {
    throw std::runtime_error(
      "frame: '" + frame + "' is fixed to the base (no joint moves it); expected a frame that the joints move");
  }
  frame_name_ = frame;
  base_names_.assign(1, "");
  base_poses_.assign(1, {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0});
  for (int f = 0; f < m.nf; ++f) {
    if (m.frame[f].body < 0 && static_cast<size_t>(f) < names.size()) {
      std::array<double, 12> pose{};
      for (int k = 0; k < 9; ++k) {
        pose[static_cast<size_t>(k)] = m.frame[f].R[k];
      }
      for (int k = 0; k < 3; ++k) {
        pose[static_cast<size_t>(9 + k)] = m.frame[f].p[k];
      }
      base_names_.push_back(names[static_cast<size_t>(f)]);
      base_poses_.push_back(pose);
    }
  }
  clear();
}

std::string TaskTarget::base_frames() const
{
  std::vector<std::string> named(base_names_.begin() + 1, base_names_.end());
  return "'' or " + format_names(named);
}

std::string TaskTarget::set(const geometry_msgs::msg::PoseStamped & msg)
{
  if (frame_ < 0) {
    return "the controller is not configured";
  }
  size_t base = base_names_.size();
  for (size_t i = 0; i < base_names_.size(); ++i) {
    if (msg.header.frame_id == base_names_[i]) {
      base = i;
      break;
    }
  }
  if (base == base_names_.size()) {
    return "header.frame_id '" + msg.header.frame_id + "' is not the base: expected " + base_frames();
  }
  const auto & p = msg.pose.position;
  const auto & o = msg.pose.orientation;
  if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z)) {
    return "the position is not finite";
  }
  double R[9];
  if (!rotation_of_quaternion(o.x, o.y, o.z, o.w, R, 3)) {
    return "the orientation (" + std::to_string(o.x) + ", " + std::to_string(o.y) + ", " + std::to_string(o.z) +
           ", " + std::to_string(o.w) + ") is not a unit quaternion (x, y, z, w); no rotation is (0, 0, 0, 1)";
  }
  // T_base_target = T_base_F T_F_target, F the frame named by frame_id
  const auto & B = base_poses_[base];
  TaskPose target;
  const double local[3] = {p.x, p.y, p.z};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      target.T[static_cast<size_t>(4 * i + j)] = B[static_cast<size_t>(3 * i)] * R[j] +
                                                 B[static_cast<size_t>(3 * i + 1)] * R[3 + j] +
                                                 B[static_cast<size_t>(3 * i + 2)] * R[6 + j];
    }
    target.T[static_cast<size_t>(4 * i + 3)] = B[static_cast<size_t>(9 + i)] +
                                               B[static_cast<size_t>(3 * i)] * local[0] +
                                               B[static_cast<size_t>(3 * i + 1)] * local[1] +
                                               B[static_cast<size_t>(3 * i + 2)] * local[2];
  }
  std::lock_guard<std::mutex> lock(mutex_);
  target.sequence = ++received_;
  buffer_.writeFromNonRT(target);
  return "";
}

void TaskTarget::clear()
{
  std::lock_guard<std::mutex> lock(mutex_);
  TaskPose none;
  none.sequence = 0;
  buffer_.writeFromNonRT(none);
}

bool TaskTarget::read(TaskPose & out) noexcept
{
  const TaskPose * target = buffer_.readFromRT();
  if (target == nullptr || target->sequence == 0) {
    return false;
  }
  out = *target;
  return true;
}

bool TaskTarget::from_interfaces(const double * values, TaskPose & out) noexcept
{
  for (int k = 0; k < 3; ++k) {
    if (!std::isfinite(values[k])) {
      return false;
    }
  }
  if (!rotation_of_quaternion(values[3], values[4], values[5], values[6], out.T.data(), 4)) {
    return false;
  }
  for (int k = 0; k < 3; ++k) {
    out.T[static_cast<size_t>(4 * k + 3)] = values[k];
  }
  out.T[12] = out.T[13] = out.T[14] = 0.0;
  out.T[15] = 1.0;
  for (size_t k = 0; k < 6; ++k) {
    const double v = values[7 + k];
    out.twist[k] = std::isfinite(v) ? v : 0.0;
  }
  return true;
}

}  // namespace robot_dynamics_control
