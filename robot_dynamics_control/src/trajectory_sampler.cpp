#include "robot_dynamics_control/trajectory_sampler.hpp"

#include <algorithm>
#include <cmath>

#include "robot_dynamics_control/engine_model.hpp"

namespace robot_dynamics_control
{

std::string trajectory_from_message(
  const trajectory_msgs::msg::JointTrajectory & msg, const std::vector<std::string> & joints,
  const std::vector<int> & index, int nq, Trajectory & out)
{
  const size_t m = msg.joint_names.size();
  // column of each controller joint in the message
  std::vector<size_t> column(joints.size(), m);
  for (size_t c = 0; c < m; ++c) {
    const auto it = std::find(joints.begin(), joints.end(), msg.joint_names[c]);
    if (it == joints.end()) {
      return "unknown joint '" + msg.joint_names[c] + "'. Valid names: " + format_names(joints);
    }
    if (column[static_cast<size_t>(it - joints.begin())] != m) {
      return "joint '" + msg.joint_names[c] + "' is named twice";
    }
    column[static_cast<size_t>(it - joints.begin())] = c;
  }
  std::vector<std::string> missing;
  for (size_t i = 0; i < joints.size(); ++i) {
    if (column[i] == m) {
      missing.push_back(joints[i]);
    }
  }
  if (!missing.empty()) {
    return "the trajectory does not name the joints " + format_names(missing);
  }
  if (msg.points.empty()) {
    return "the trajectory has no points";
  }
  const size_t P = msg.points.size();
  const bool has_v = !msg.points[0].velocities.empty();
  const bool has_a = !msg.points[0].accelerations.empty();
  if (has_a && !has_v) {
    return "accelerations without velocities";
  }
  out.nq = nq;
  out.points = P;
  out.has_velocity = has_v;
  out.has_acceleration = has_a;
  out.t.assign(P, 0.0);
  const auto N = static_cast<size_t>(nq);
  out.q.assign(P * N, 0.0);
  out.qd.assign(P * N, 0.0);
  out.qdd.assign(P * N, 0.0);
  double previous = -1.0;
  for (size_t p = 0; p < P; ++p) {
    const auto & point = msg.points[p];
    const std::string where = "point " + std::to_string(p) + ": ";
    const double t = static_cast<double>(point.time_from_start.sec) + 1e-9 * point.time_from_start.nanosec;
    if (!(t > previous) || !std::isfinite(t)) {
      return where + "time_from_start " + std::to_string(t) + " s does not increase (from >= 0)";
    }
    previous = t;
    out.t[p] = t;
    if (point.positions.size() != m) {
      return where + std::to_string(point.positions.size()) + " positions for " + std::to_string(m) + " joints";
    }
    if (point.velocities.size() != (has_v ? m : 0)) {
      return where + std::to_string(point.velocities.size()) + " velocities: give " + std::to_string(m) +
             " on every point or none";
    }
    if (point.accelerations.size() != (has_a ? m : 0)) {
      return where + std::to_string(point.accelerations.size()) + " accelerations: give " + std::to_string(m) +
             " on every point or none";
    }
    for (size_t i = 0; i < joints.size(); ++i) {
      const size_t c = column[i], k = p * N + static_cast<size_t>(index[i]);
      out.q[k] = point.positions[c];
      out.qd[k] = has_v ? point.velocities[c] : 0.0;
      out.qdd[k] = has_a ? point.accelerations[c] : 0.0;
      if (!std::isfinite(out.q[k]) || !std::isfinite(out.qd[k]) || !std::isfinite(out.qdd[k])) {
        return where + "non-finite value for joint '" + joints[i] + "'";
      }
    }
  }
  out.stamp = static_cast<double>(msg.header.stamp.sec) + 1e-9 * msg.header.stamp.nanosec;
  return "";
}

JointPoint hermite(int order, double T, double s, const JointPoint & start, const JointPoint & end) noexcept
{
  const double p0 = start.p, v0 = start.v, a0 = start.a, p1 = end.p, v1 = end.v, a1 = end.a;
  JointPoint out;
  double & p = out.p;
  double & v = out.v;
  double & a = out.a;
  const double d = p1 - p0;
  if (order >= 5) {
    // p(s) = sum c_k s^k matching p, v, a at both ends
    const double T2 = T * T, T3 = T2 * T;
    const double c2 = 0.5 * a0;
    const double c3 = (20.0 * d - (8.0 * v1 + 12.0 * v0) * T - (3.0 * a0 - a1) * T2) / (2.0 * T3);
    const double c4 = (-30.0 * d + (14.0 * v1 + 16.0 * v0) * T + (3.0 * a0 - 2.0 * a1) * T2) / (2.0 * T3 * T);
    const double c5 = (12.0 * d - 6.0 * (v1 + v0) * T + (a1 - a0) * T2) / (2.0 * T3 * T2);
    p = p0 + s * (v0 + s * (c2 + s * (c3 + s * (c4 + s * c5))));
    v = v0 + s * (2.0 * c2 + s * (3.0 * c3 + s * (4.0 * c4 + s * 5.0 * c5)));
    a = 2.0 * c2 + s * (6.0 * c3 + s * (12.0 * c4 + s * 20.0 * c5));
  } else if (order >= 3) {
    const double c2 = (3.0 * d - (2.0 * v0 + v1) * T) / (T * T);
    const double c3 = (-2.0 * d + (v0 + v1) * T) / (T * T * T);
    p = p0 + s * (v0 + s * (c2 + s * c3));
    v = v0 + s * (2.0 * c2 + s * 3.0 * c3);
    a = 2.0 * c2 + s * 6.0 * c3;
  } else {
    p = p0 + d * (s / T);
    v = d / T;
    a = 0.0;
  }
  return out;
}

void sample_trajectory(
  const Trajectory & tr, const double * q0, const double * qd0, const double * qdd0, double s, double * q,
  double * qd, double * qdd) noexcept
{
  const auto N = static_cast<size_t>(tr.nq);
  const int order = tr.has_acceleration ? 5 : tr.has_velocity ? 3 : 1;
  if (tr.points == 0 || !(s < tr.t[tr.points - 1])) {  // after the end (or NaN): the last position, at rest
    const size_t last = tr.points == 0 ? 0 : (tr.points - 1) * N;
    for (size_t j = 0; j < N; ++j) {
      q[j] = tr.points == 0 ? q0[j] : tr.q[last + j];
      qd[j] = 0.0;
      qdd[j] = 0.0;
    }
    return;
  }
  if (s < 0.0) {  // before the start: the state it starts from
    for (size_t j = 0; j < N; ++j) {
      q[j] = q0[j];
      qd[j] = qd0[j];
      qdd[j] = qdd0[j];
    }
    return;
  }
  // the segment [t_(b-1), t_b] holding s; t_(-1) = 0 is the state it starts from
  const size_t b = static_cast<size_t>(std::upper_bound(tr.t.begin(), tr.t.begin() + tr.points, s) - tr.t.begin());
  const double ta = b == 0 ? 0.0 : tr.t[b - 1];
  const double * pa = b == 0 ? q0 : &tr.q[(b - 1) * N];
  const double * va = b == 0 ? qd0 : &tr.qd[(b - 1) * N];
  const double * aa = b == 0 ? qdd0 : &tr.qdd[(b - 1) * N];
  const double * pb = &tr.q[b * N];
  const double * vb = &tr.qd[b * N];
  const double * ab = &tr.qdd[b * N];
  // the first segment leaves the held state with its velocity and acceleration (quintic) unless the
  // waypoints carry none: then linear, as between positions-only points
  for (size_t j = 0; j < N; ++j) {
    const JointPoint at = hermite(order, tr.t[b] - ta, s - ta, {pa[j], va[j], aa[j]}, {pb[j], vb[j], ab[j]});
    q[j] = at.p;
    qd[j] = at.v;
    qdd[j] = at.a;
  }
}

}  // namespace robot_dynamics_control
