// bench_update's Cartesian impedance subjects (compliant_subjects.hpp).
#include "compliant_subjects.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>

namespace robot_dynamics_control::bench
{

std::shared_ptr<CompliantLaw> compliant_law(const rd_model & m, rd_work & w, const std::vector<double> & q0,
                                            const std::string & urdf, const std::vector<std::string> & joints)
{
  auto c = std::make_shared<CompliantLaw>();
  const auto n = static_cast<size_t>(m.nq);
  c->q.resize(n);
  c->qd.resize(n);
  c->tau.resize(n);
  c->null_k.assign(n, 10.0);
  c->posture = q0;
  rd_body_poses(&m, c->posture.data(), &w);
  rd_frame_pose(&m, &w, m.nf - 1, c->pose.data());
  c->pose[3] += 0.02;
  c->pose[7] -= 0.01;
  c->pose[11] += 0.01;
  c->o.law = RD_CARTESIAN_IMPEDANCE;
  c->o.task = rd_task{m.nf - 1, RD_LOCAL_WORLD_ALIGNED, 0, 0.05};
  c->o.kp = c->kp.data();
  c->o.damping_ratio = 0.7;
  c->o.null_stiffness = c->null_k.data();
  c->o.null_damping_ratio = 1.0;
  c->o.posture = c->posture.data();
  c->o.max_force = c->o.max_moment = c->o.max_torque_rate = INFINITY;
  c->o.singular_threshold = 0.02;
  c->in = rd_compliant_input{c->q.data(), c->qd.data(), c->pose.data(), c->twist.data(), nullptr, nullptr, 0.001};
#ifdef RD_BENCH_HAVE_PINOCCHIO
  c->crisp = std::make_unique<CrispStyleImpedance>(urdf, joints, kCompliantFrame);
  c->crisp->set_parameters(crisp_defaults(c->kp.data(), n, 10.0));
  c->crisp->set_target(c->pose.data());
  c->crisp->set_posture(c->posture.data());
#else
  (void)urdf;
  (void)joints;
#endif
  return c;
}

#ifdef RD_BENCH_HAVE_PINOCCHIO
double check_crisp(const rd_model & m, rd_work & w, CompliantLaw & c,
                   const std::vector<std::vector<double>> & qs, const std::vector<std::vector<double>> & qds)
{
  const auto n = static_cast<size_t>(m.nq);
  std::vector<double> A(n * n), Lambda(36), D(36), K(36, 0.0), tau(n), T(16), T_crisp(16);
  for (size_t i = 0; i < 6; ++i) {
    K[i * 6 + i] = c.kp[i];
  }
  rd_compliant_options exact = c.o;
  exact.singular_threshold = 0.0;
  double worst = 0.0;
  for (size_t s = 0; s < qs.size(); ++s) {
    c.q = qs[s];
    c.qd = qds[s];
    const rd_input in{c.q.data(), c.qd.data(), nullptr, nullptr, nullptr, 0};
    const rd_task task{m.nf - 1, RD_LOCAL_WORLD_ALIGNED, 0, 0.0};
    rd_task_space_out out{};
    out.Lambda = Lambda.data();
    out.T = T.data();
    if (rd_crba(&m, c.q.data(), A.data(), &w) != RD_OK || rd_task_space(&m, &in, &task, &out, &w) != RD_OK ||
        rd_impedance_damping(6, K.data(), Lambda.data(), exact.damping_ratio, D.data()) != RD_OK ||
        rd_compliant_control(&m, &exact, &c.in, tau.data(), nullptr, &w) != RD_OK) {
      throw std::runtime_error("the engine's Cartesian impedance failed at check state " + std::to_string(s));
    }
    auto p = crisp_defaults(c.kp.data(), n, 10.0);
    std::copy(D.begin(), D.end(), p.damping);
    for (size_t j = 0; j < n; ++j) {
      p.null_damping[j] = 2.0 * exact.null_damping_ratio * std::sqrt(c.null_k[j] * A[j * n + j]);
    }
    std::fill(std::begin(p.error_clip), std::end(p.error_clip), INFINITY);
    p.null_max_tau = p.max_delta_tau = INFINITY;
    p.operational_space_regularization = 1e-9;
    c.crisp->set_parameters(p);
    if (!c.crisp->update(c.q.data(), c.qd.data())) {
      throw std::runtime_error("the CRISP-style law failed at check state " + std::to_string(s));
    }
    c.crisp->frame_pose(T_crisp.data());
    double scale = 0.0, diff = 0.0, pose_diff = 0.0;
    for (size_t j = 0; j < n; ++j) {  // the engine's rnea holds the model's joint friction, Pinocchio's not
      const double friction = rd_friction(&m, static_cast<int>(j), c.qd[j], 0.0);
      scale = std::max(scale, std::abs(tau[j]));
      diff = std::max(diff, std::abs(tau[j] - (c.crisp->tau()[j] + friction)));
    }
    for (size_t i = 0; i < 16; ++i) {
      pose_diff = std::max(pose_diff, std::abs(T[i] - T_crisp[i]));
    }
    if (!(pose_diff <= 1e-9)) {
      throw std::runtime_error(std::string("the engine's frame m.nf - 1 is not Pinocchio's ") + kCompliantFrame +
                               " (pose difference " + std::to_string(pose_diff) + ")");
    }
    worst = std::max(worst, diff / scale);
  }
  if (!(worst <= 1e-6)) {
    throw std::runtime_error("the CRISP-style law's torques differ from rd_compliant_control's by " +
                             std::to_string(worst) + " of max |tau| (1e-6 allowed)");
  }
  c.crisp->set_parameters(crisp_defaults(c.kp.data(), n, 10.0));
  const std::vector<double> zero(n, 0.0);
  c.crisp->set_previous(zero.data());
  return worst;
}
#endif

}  // namespace robot_dynamics_control::bench
